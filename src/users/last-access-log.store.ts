import { sql } from 'kysely';
import type { Database } from '../db/database.js';

/** How the account proved who it was (docs/security.md#the-last-access-log); a session cookie's requests are not written, their sign-in was. */
export type AccessCredential = 'password' | 'api_key' | 'console' | 'sso';

/** One sign-in, or one refused sign-in of a known user, as it is written. */
export interface AccessEntry {
  userId: number;
  ip: string;
  credential: AccessCredential;
  userAgent: string | null;
  success: boolean;
  at: Date;
}

/** One row of a user's last access log as it is shown (OnApp's `last_access_log_item`). */
export interface AccessLogItem {
  id: number;
  user_id: number;
  ip: string;
  credential: string;
  user_agent: string | null;
  success: boolean;
  created_at: Date;
}

const columns = ['id', 'user_id', 'ip', 'credential', 'user_agent', 'success', 'created_at'] as const;

const toItem = (row: { id: number; user_id: number; ip: string; credential: string; user_agent: string | null; success: number; created_at: string }): AccessLogItem => ({
  id: Number(row.id),
  user_id: Number(row.user_id),
  ip: row.ip,
  credential: row.credential,
  user_agent: row.user_agent,
  success: Number(row.success) === 1,
  created_at: new Date(row.created_at),
});

/** The SQL of `last_access_log` (migration 036). */
export function lastAccessLogRepository(database: Database) {
  const { db } = database;
  return {
    /**
     * Writes `entries` in one transaction, then keeps only the latest `keep` rows of each user they
     * name (docs/security.md#the-last-access-log). A user deleted meanwhile is skipped, not an error.
     */
    async insert(entries: readonly AccessEntry[], keep: number): Promise<void> {
      if (entries.length === 0) return;
      const userIds = [...new Set(entries.map((entry) => entry.userId))];
      await db.transaction().execute(async (trx) => {
        const present = new Set((await trx.selectFrom('users').select('id').where('id', 'in', userIds).execute()).map((row) => Number(row.id)));
        const rows = entries.filter((entry) => present.has(entry.userId)).map((entry) => ({
          user_id: entry.userId,
          ip: entry.ip,
          credential: entry.credential,
          user_agent: entry.userAgent,
          success: entry.success ? 1 : 0,
          created_at: entry.at.toISOString(),
        }));
        if (rows.length === 0) return;
        await trx.insertInto('last_access_log').values(rows).execute();
        for (const userId of present) {
          // The id of the oldest row kept; everything before it goes.
          await trx.deleteFrom('last_access_log')
            .where('user_id', '=', userId)
            .where('id', '<', (eb) => eb.selectFrom(
              (inner) => inner.selectFrom('last_access_log').select('id').where('user_id', '=', userId).orderBy('id', 'desc').limit(keep).as('kept'),
            ).select(sql<number>`min(kept.id)`.as('oldest')))
            .execute();
        }
      });
    },

    /** The user's rows at positions `offset` .. `offset + limit - 1`, oldest first (id order). */
    async page(userId: number, limit: number, offset: number): Promise<AccessLogItem[]> {
      const rows = await db.selectFrom('last_access_log').select(columns).where('user_id', '=', userId).orderBy('id').limit(limit).offset(offset).execute();
      return rows.map(toItem);
    },

    /** The user's latest `limit` rows, newest first (the console's user page). */
    async latest(userId: number, limit: number): Promise<AccessLogItem[]> {
      const rows = await db.selectFrom('last_access_log').select(columns).where('user_id', '=', userId).orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toItem);
    },

    async count(userId: number): Promise<number> {
      const row = await db.selectFrom('last_access_log').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

export type LastAccessLogRepository = ReturnType<typeof lastAccessLogRepository>;
