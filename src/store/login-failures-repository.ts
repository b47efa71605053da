import { sql } from 'kysely';
import type { Database } from './database.js';

export interface FailureWindow {
  key: string;
  failures: number;
  windowStartedAt: Date;
}

/** Failed-login counters in fixed windows, one row a key, shared by every process. */
export function loginFailuresRepository(database: Database) {
  const { db } = database;
  return {
    async find(keys: string[]): Promise<FailureWindow[]> {
      const rows = await db.selectFrom('login_failures').selectAll().where('key', 'in', keys).execute();
      return rows.map((row) => ({ key: row.key, failures: Number(row.failures), windowStartedAt: new Date(row.window_started_at) }));
    },

    /**
     * Counts one attempt for each key in one statement per key: a window that started at or before
     * `windowStart` (so has passed) starts over at 1, else the count goes up, so concurrent attempts
     * are all counted. Returns the windows as they now stand.
     */
    async charge(keys: string[], now: Date, windowStart: Date): Promise<FailureWindow[]> {
      const at = now.toISOString();
      const expired = windowStart.toISOString();
      const windows: FailureWindow[] = [];
      for (const key of keys) {
        const row = await db
          .insertInto('login_failures')
          .values({ key, failures: 1, window_started_at: at })
          .onConflict((oc) =>
            oc.column('key').doUpdateSet({
              failures: sql`case when login_failures.window_started_at <= ${expired} then 1 else login_failures.failures + 1 end`,
              window_started_at: sql`case when login_failures.window_started_at <= ${expired} then ${at} else login_failures.window_started_at end`,
            }),
          )
          .returningAll()
          .executeTakeFirstOrThrow();
        windows.push({ key: row.key, failures: Number(row.failures), windowStartedAt: new Date(row.window_started_at) });
      }
      return windows;
    },

    /** Takes back one attempt (it succeeded). */
    async refund(key: string): Promise<void> {
      await db.updateTable('login_failures').set({ failures: sql`failures - 1` }).where('key', '=', key).where('failures', '>', 0).execute();
    },

    async clear(key: string): Promise<void> {
      await db.deleteFrom('login_failures').where('key', '=', key).execute();
    },

    /** Drops windows that have passed, so the table holds only what is still counting. */
    async prune(windowStart: Date): Promise<void> {
      await db.deleteFrom('login_failures').where('window_started_at', '<', windowStart.toISOString()).execute();
    },
  };
}

export type LoginFailuresRepository = ReturnType<typeof loginFailuresRepository>;
