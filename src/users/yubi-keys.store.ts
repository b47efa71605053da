import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import type { Schema } from '../db/schema.js';

/** One of a user's YubiKeys as OnApp's PHP wrapper reads it (User/YubiKey.php); `otp` is the key's public id. */
export interface YubiKey {
  id: number;
  created_at: Date;
  updated_at: Date;
  user_id: number;
  label: string;
  last_used: string | null;
  otp: string;
}

const columns = ['id', 'user_id', 'label', 'key_id', 'created_at', 'updated_at', 'last_used'] as const;

const toKey = (row: { id: number; user_id: number; label: string; key_id: string; created_at: string; updated_at: string; last_used: string | null }): YubiKey => ({
  id: Number(row.id),
  created_at: new Date(row.created_at),
  updated_at: new Date(row.updated_at),
  user_id: Number(row.user_id),
  label: row.label,
  last_used: row.last_used,
  otp: row.key_id,
});

/** users.registered_yubikey follows "the user has a key", and the change to `users` tells every process (migration 033). */
async function markUser(trx: Kysely<Schema>, userId: number, now: Date): Promise<void> {
  const left = await trx.selectFrom('user_yubi_keys').select('id').where('user_id', '=', userId).limit(1).executeTakeFirst();
  await trx.updateTable('users').set({ registered_yubikey: left ? 1 : 0, updated_at: now.toISOString() }).where('id', '=', userId).execute();
}

/** Thrown inside a transaction to undo it, with what to answer. */
class Refused extends Error {
  constructor(readonly outcome: 'duplicate' | 'limit') {
    super(outcome);
  }
}

/** The SQL of `user_yubi_keys` (migration 033). */
export function yubiKeysRepository(database: Database) {
  const { db } = database;
  return {
    async page(userId: number, limit: number, offset: number): Promise<YubiKey[]> {
      return (await db.selectFrom('user_yubi_keys').select(columns).where('user_id', '=', userId).orderBy('id').limit(limit).offset(offset).execute()).map(toKey);
    },

    async count(userId: number): Promise<number> {
      const row = await db.selectFrom('user_yubi_keys').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async find(userId: number, id: number): Promise<YubiKey | undefined> {
      const row = await db.selectFrom('user_yubi_keys').select(columns).where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
      return row && toKey(row);
    },

    /** Records a key for the user: 'duplicate' when it has that key already, 'limit' past `max`, undefined when there is no such user. */
    async create(userId: number, label: string, keyId: string, max: number, now: Date): Promise<YubiKey | 'duplicate' | 'limit' | undefined> {
      try {
        return await db.transaction().execute(async (trx) => {
        // The user's row first: the write lock on SQLite, and on PostgreSQL the row lock that orders two adds for one user.
        const user = await trx.updateTable('users').set({ registered_yubikey: 1, updated_at: now.toISOString() }).where('id', '=', userId).returning('id').executeTakeFirst();
        if (!user) return undefined;
        const held = await trx.selectFrom('user_yubi_keys').select(['key_id']).where('user_id', '=', userId).execute();
        // Thrown, so the user's row is left as it was.
        if (held.some((row) => row.key_id === keyId)) throw new Refused('duplicate');
        if (held.length >= max) throw new Refused('limit');
        const at = now.toISOString();
        const row = await trx.insertInto('user_yubi_keys').values({ user_id: userId, label, key_id: keyId, created_at: at, updated_at: at, last_used: null }).returning(columns).executeTakeFirstOrThrow();
        return toKey(row);
        });
      } catch (error) {
        if (error instanceof Refused) return error.outcome;
        throw error;
      }
    },

    /** Forgets one key: false when the user has no such key. */
    remove(userId: number, id: number, now: Date): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('user_yubi_keys').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
        if (Number(result.numDeletedRows) !== 1) return false;
        await markUser(trx, userId, now);
        return true;
      });
    },
  };
}

export type YubiKeysRepository = ReturnType<typeof yubiKeysRepository>;
