import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { BreakdownDimension } from './infrastructure-error.js';

/**
 * The errors most recently seen that the overview's "top" figures read (docs/console.md#overview):
 * each figure reads at most these, through the `updated_at` index (migration 006), however many errors are kept.
 */
export const OVERVIEW_SCAN = 5000;

/**
 * The cloud-wide reads of the console's overview (docs/console.md#overview), each bounded by an index:
 * the hourly counts of every error (`error_histogram_hour`), the errors first seen since a time
 * (`infrastructure_errors_created_at`), and, of the errors seen since a time (`infrastructure_errors_updated_at`,
 * at most OVERVIEW_SCAN), those that regressed and their occurrences per host or component (primary keys).
 */
export function trackerOverviewStore(database: Database) {
  const { db } = database;
  /** The ids of the errors seen since `since`, newest first, at most OVERVIEW_SCAN. */
  const seenSince = (since: Date) => db.selectFrom('infrastructure_errors').select('id')
    .where('updated_at', '>=', since.toISOString()).orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(OVERVIEW_SCAN);

  return {
    /** Occurrences of all errors per hour, from `fromHour` to `toHour` (hours since the epoch). */
    async cloudHourlyCounts(fromHour: number, toHour: number): Promise<Map<number, number>> {
      const rows = await db.selectFrom('error_histogram').select(['hour', (eb) => eb.fn.sum<number>('count').as('count')])
        .where('hour', '>=', fromHour).where('hour', '<=', toHour).groupBy('hour').execute();
      return new Map(rows.map((row) => [Number(row.hour), Number(row.count)]));
    },

    /** How many errors were first seen at or after `since`. */
    async createdSince(since: Date): Promise<number> {
      const row = await db.selectFrom('infrastructure_errors').select((eb) => eb.fn.countAll<number>().as('count'))
        .where('created_at', '>=', since.toISOString()).executeTakeFirstOrThrow();
      return Number(row.count);
    },

    /** The errors that regressed at or after `since` (resolved, then seen again), latest first, and how many. */
    async regressedSince(since: Date, limit: number): Promise<{ items: Array<{ id: number; error_class: string; regressed_at: Date }>; total: number }> {
      const at = since.toISOString();
      const recent = seenSince(since).as('recent');
      const base = db.selectFrom(recent).innerJoin('error_triage as t', 't.error_id', 'recent.id')
        .innerJoin('infrastructure_errors as e', 'e.id', 'recent.id').where('t.regressed_at', '>=', at);
      const [rows, count] = await Promise.all([
        base.select(['e.id', 'e.error_class', 't.regressed_at']).orderBy('t.regressed_at', 'desc').orderBy('e.id', 'desc').limit(limit).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map((row) => ({ id: Number(row.id), error_class: row.error_class, regressed_at: new Date(row.regressed_at as string) })), total: Number(count.count) };
    },

    /** Hosts or components by the occurrences of the errors seen since `since`, largest first ('' is "not given", left out). */
    async topValues(dimension: BreakdownDimension, since: Date, limit: number): Promise<Array<{ value: string; count: number }>> {
      const recent = seenSince(since).as('recent');
      const rows = await db.selectFrom(recent).innerJoin('error_breakdown as b', (join) => join.onRef('b.error_id', '=', 'recent.id').on('b.dimension', '=', dimension))
        .where('b.value', '<>', '').select(['b.value', sql<number>`sum(b.count)`.as('count')])
        .groupBy('b.value').orderBy(sql`sum(b.count)`, 'desc').orderBy('b.value').limit(limit).execute();
      return rows.map((row) => ({ value: row.value, count: Number(row.count) }));
    },
  };
}
