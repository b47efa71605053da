import { type Kysely, sql } from 'kysely';
import type { Schema } from './schema.js';

export interface FailureWindow {
  key: string;
  failures: number;
  windowStartedAt: Date;
}

/** Failed-login counters in fixed windows, one row a key, shared by every process. */
export function loginFailuresRepository(db: Kysely<Schema>) {
  return {
    async find(keys: string[]): Promise<FailureWindow[]> {
      if (keys.length === 0) return [];
      const rows = await db.selectFrom('login_failures').selectAll().where('key', 'in', keys).execute();
      return rows.map((row) => ({ key: row.key, failures: Number(row.failures), windowStartedAt: new Date(row.window_started_at) }));
    },

    /**
     * Counts one failure for each key in one statement per key: a window that started at or before
     * `windowStart` (so has passed) starts over at 1, else the count goes up, so concurrent failures are all counted.
     */
    async recordFailure(keys: string[], now: Date, windowStart: Date): Promise<void> {
      const at = now.toISOString();
      const expired = windowStart.toISOString();
      for (const key of keys) {
        await db
          .insertInto('login_failures')
          .values({ key, failures: 1, window_started_at: at })
          .onConflict((oc) =>
            oc.column('key').doUpdateSet({
              failures: sql`case when login_failures.window_started_at <= ${expired} then 1 else login_failures.failures + 1 end`,
              window_started_at: sql`case when login_failures.window_started_at <= ${expired} then ${at} else login_failures.window_started_at end`,
            }),
          )
          .execute();
      }
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
