import { type ExpressionBuilder, sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { Schema } from '../db/schema.js';

/** One counter: a name from an address, an address across names (`account` ''), or a name across addresses (`address` ''). */
export interface CounterKey {
  account: string;
  address: string;
}

export interface FailureWindow extends CounterKey {
  failures: number;
  windowStartedAt: Date;
}

const toWindow = (row: { account: string; address: string; failures: number | string; window_started_at: string }): FailureWindow => ({
  account: row.account,
  address: row.address,
  failures: Number(row.failures),
  windowStartedAt: new Date(row.window_started_at),
});

const anyOf = (keys: CounterKey[]) => (eb: ExpressionBuilder<Schema, 'failed_logins'>) =>
  eb.or(keys.map((key) => eb.and([eb('account', '=', key.account), eb('address', '=', key.address)])));

/**
 * Failed-login counters in fixed windows, and the addresses each user has logged in from: shared by
 * every process through the database (docs/security.md#brute-force).
 */
export function loginFailuresRepository(database: Database) {
  const { db } = database;
  return {
    async find(keys: CounterKey[]): Promise<FailureWindow[]> {
      const rows = await db.selectFrom('failed_logins').selectAll().where(anyOf(keys)).execute();
      return rows.map(toWindow);
    },

    /**
     * Counts one attempt on each key, in one statement: a window that started at or before
     * `windowStart` (so has passed) starts over at 1, else the count goes up, so concurrent attempts
     * are all counted. Returns the windows as they now stand. Rows go in key order, so two such
     * statements lock them in the same order.
     */
    async charge(keys: CounterKey[], now: Date, windowStart: Date): Promise<FailureWindow[]> {
      const at = now.toISOString();
      const expired = windowStart.toISOString();
      const ordered = [...keys].sort((a, b) => (a.account === b.account ? (a.address < b.address ? -1 : 1) : a.account < b.account ? -1 : 1));
      const rows = await db
        .insertInto('failed_logins')
        .values(ordered.map((key) => ({ ...key, failures: 1, window_started_at: at })))
        .onConflict((oc) =>
          oc.columns(['account', 'address']).doUpdateSet({
            failures: sql`case when failed_logins.window_started_at <= ${expired} then 1 else failed_logins.failures + 1 end`,
            window_started_at: sql`case when failed_logins.window_started_at <= ${expired} then ${at} else failed_logins.window_started_at end`,
          }),
        )
        .returningAll()
        .execute();
      return rows.map(toWindow);
    },

    /** Takes back one attempt on each key (it succeeded). */
    async refund(keys: CounterKey[]): Promise<void> {
      await db.updateTable('failed_logins').set({ failures: sql`failures - 1` }).where(anyOf(keys)).where('failures', '>', 0).execute();
    },

    async clear(key: CounterKey): Promise<void> {
      await db.deleteFrom('failed_logins').where('account', '=', key.account).where('address', '=', key.address).execute();
    },

    /** Every counter of these account names, from any address. */
    async clearAccounts(names: string[]): Promise<void> {
      await db.deleteFrom('failed_logins').where('account', 'in', names).execute();
    },

    /** Drops windows that have passed, so the table holds only what is still counting. */
    async prune(windowStart: Date): Promise<void> {
      await db.deleteFrom('failed_logins').where('window_started_at', '<', windowStart.toISOString()).execute();
    },

    /** When user `userId` last logged in from `address` (as remembered), or undefined. */
    async lastSuccess(userId: number, address: string): Promise<Date | undefined> {
      const row = await db
        .selectFrom('login_addresses')
        .select('last_success_at')
        .where('user_id', '=', userId)
        .where('address', '=', address)
        .executeTakeFirst();
      return row && new Date(row.last_success_at);
    },

    /**
     * Remembers that user `userId` logged in from `address` now. With `keep`, forgets all but the
     * `keep` latest addresses of the user. Nothing for a user removed meanwhile.
     */
    async rememberSuccess(userId: number, address: string, now: Date, keep?: number): Promise<void> {
      const at = now.toISOString();
      await db
        .insertInto('login_addresses')
        .columns(['user_id', 'address', 'last_success_at'])
        .expression((eb) => eb.selectFrom('users').select((s) => ['id', s.val(address).as('address'), s.val(at).as('last_success_at')]).where('id', '=', userId))
        .onConflict((oc) => oc.columns(['user_id', 'address']).doUpdateSet({ last_success_at: at }))
        .execute();
      if (keep === undefined) return;
      await db
        .deleteFrom('login_addresses')
        .where('user_id', '=', userId)
        .where('address', 'not in', (eb) =>
          eb.selectFrom('login_addresses').select('address').where('user_id', '=', userId).orderBy('last_success_at', 'desc').orderBy('address').limit(keep),
        )
        .execute();
    },
  };
}

export type LoginFailuresRepository = ReturnType<typeof loginFailuresRepository>;
