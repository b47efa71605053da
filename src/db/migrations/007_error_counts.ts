import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * `error_counts`: how many errors there are in all (`all`, value ''), per `reported` ('0', '1'), per
 * `error_class`, and per `host` and `component` an error was seen on (its `error_breakdown` rows).
 * Triggers in the database (one set per dialect) keep them exact, so the list's X-Total for no filter
 * or one of these filters is one row read, not a count over every error (docs/architecture.md#error-counts).
 * Every trigger adds a signed count (an upsert), so concurrent writers only wait for each other's row
 * lock; the `all` row, first in every statement's order, is the first lock each adding statement takes.
 */
export function errorCountsMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Atomic, as migration 004: a row written between the triggers and the backfill is counted once.
      await dialect.atomically(db, async (trx) => {
        await sql`
          create table error_counts (
            dimension varchar(16) not null,
            value varchar(255) not null,
            errors integer not null,
            primary key (dimension, value)
          ) ${sql.raw(dialect.keyOrderedTable)}`.execute(trx);
        await dialect.createErrorCountTriggers(trx);
        await sql`
          insert into error_counts (dimension, value, errors)
          select 'all', '', count(*) from infrastructure_errors
          union all
          select 'reported', cast(reported as varchar(255)), count(*) from infrastructure_errors group by reported
          union all
          select 'error_class', error_class, count(*) from infrastructure_errors group by error_class
          union all
          select dimension, value, count(*) from error_breakdown group by dimension, value`.execute(trx);
      });
    },
  };
}
