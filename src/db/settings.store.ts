import type { Database } from './database.js';

/** Installation-wide values that every process must share, such as the session signing key. */
export function settingsRepository(database: Database) {
  const { db } = database;
  return {
    async get(key: string): Promise<string | undefined> {
      const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
      return row?.value;
    },

    /** Stores `value`, replacing any value the key had. */
    async put(key: string, value: string): Promise<void> {
      await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
    },

    /**
     * Claims the lease `name` until `until` if it expired by `now`: one conditional update, so of
     * several processes claiming at once exactly one gets it. True when this caller did.
     */
    async claimLease(name: string, until: Date, now: Date): Promise<boolean> {
      const key = `lease:${name}`;
      await db.insertInto('settings').values({ key, value: '' }).onConflict((oc) => oc.column('key').doNothing()).execute();
      const result = await db.updateTable('settings').set({ value: until.toISOString() })
        .where('key', '=', key).where('value', '<=', now.toISOString())
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Stores `value` unless the key already has one; returns the value that won. */
    async getOrInsert(key: string, value: string): Promise<string> {
      await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
      const stored = await this.get(key);
      if (stored === undefined) throw new Error(`setting ${key} vanished after insert`);
      return stored;
    },
  };
}

export type SettingsRepository = ReturnType<typeof settingsRepository>;
