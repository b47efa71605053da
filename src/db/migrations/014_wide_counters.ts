import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** Every column a storm of reports can grow past 2^31 - 1, by table (on PostgreSQL an integer column stops at 2^31 - 1 and the report fails). */
const COUNT_COLUMNS: Record<string, string[]> = {
  infrastructure_errors: ['counter'],
  error_occurrences: ['ordinal', 'count'],
  error_histogram: ['count'],
  error_breakdown: ['count'],
  error_counts: ['errors'],
  error_alerts: ['window_count'],
  row_blocks: ['row_count'],
};

/**
 * Counters are 64-bit (docs/operations.md#migrations): PostgreSQL's `integer` is 32-bit, so an
 * error whose counter passed 2 147 483 647 failed its reports (and, before they were written one by
 * one after a failed batch, every other report of the batch). The stores read each one back with
 * Number, exact up to 2^53. SQLite's integers are already 64-bit: nothing changes there.
 */
export function wideCountersMigration(dialect: Dialect) {
  return {
    up: dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
      sqlite: () => Promise.resolve(),
      async postgres(db) {
        for (const [table, columns] of Object.entries(COUNT_COLUMNS)) {
          const changes = columns.map((column) => `alter column ${column} type bigint`).join(', ');
          await sql.raw(`alter table ${table} ${changes}`).execute(db);
        }
      },
    }),
  };
}
