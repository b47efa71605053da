import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * The error tracker's detail beside the nine-field record (docs/api.md#infrastructure-errors):
 * - `error_occurrences`: the kept sample of occurrences. `ordinal` is the error's counter when the
 *   occurrence was counted, so "the first N and the latest M" is a range test on it, and trimming the
 *   sample is one range delete.
 * - `error_histogram`: occurrences per hour (`hour` = Unix seconds / 3600), exact, kept apart from the
 *   sample so they stay exact when the sample sheds.
 * - `error_breakdown`: occurrences per host and per component (`dimension`), exact; '' is "not given".
 * - indexes for every sort and filter of the list.
 * Nothing caches infrastructure errors, so their writes stop telling other processes to drop their
 * cached pages (migration 003): a storm of reports no longer empties the users page cache.
 */
export function errorTrackerMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('error_occurrences'))
        .addColumn('error_id', 'integer', (c) => c.notNull())
        .addColumn('ordinal', 'integer', (c) => c.notNull())
        .addColumn('occurred_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('host', 'varchar(255)')
        .addColumn('component', 'varchar(255)')
        .addColumn('request_id', 'varchar(255)')
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('context', 'text')
        .execute();
      await db.schema.createIndex('error_occurrences_error_ordinal').on('error_occurrences').columns(['error_id', 'ordinal']).execute();

      await db.schema
        .createTable('error_histogram')
        .addColumn('error_id', 'integer', (c) => c.notNull())
        .addColumn('hour', 'integer', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('error_histogram_pkey', ['error_id', 'hour'])
        .execute();
      await db.schema.createIndex('error_histogram_hour').on('error_histogram').column('hour').execute();

      await db.schema
        .createTable('error_breakdown')
        .addColumn('error_id', 'integer', (c) => c.notNull())
        .addColumn('dimension', 'varchar(16)', (c) => c.notNull())
        .addColumn('value', 'varchar(255)', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('last_seen_at', 'varchar(32)', (c) => c.notNull())
        .addPrimaryKeyConstraint('error_breakdown_pkey', ['error_id', 'dimension', 'value'])
        .execute();
      await db.schema.createIndex('error_breakdown_value').on('error_breakdown').columns(['dimension', 'value', 'error_id']).execute();

      const errors = (name: string, columns: string[]) =>
        db.schema.createIndex(`infrastructure_errors_${name}`).on('infrastructure_errors').columns(columns).execute();
      await errors('updated_at', ['updated_at', 'id']);
      await errors('created_at', ['created_at', 'id']);
      await errors('counter', ['counter', 'id']);
      await errors('reported_updated_at', ['reported', 'updated_at', 'id']);
      await errors('class_updated_at', ['error_class', 'updated_at', 'id']);

      await dialect.changeNotifications.drop(db, ['infrastructure_errors']);
    },
  };
}
