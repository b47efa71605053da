import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Log sources and their silence (docs/log-sources.md#sources-and-silence):
 * - `log_sources`: every (host, program) pair that has sent a record, errors or not (`program` '' when
 *   the record named none): when it was first and last seen, how many lines and errors it sent, the
 *   component and ingest key of its latest batch (`key_id` no foreign key: a revoked key's sources
 *   stay). Unique on (host, program): the readers' batches upsert into it from every process.
 * - `alert_rules.silent_minutes`: a rule that raises `silent` and `back` alerts for the sources in its
 *   scope (null: none).
 * - `log_source_silences`: per rule and source, the silence claimed (`last_seen_at` as it was when the
 *   `silent` alert was queued). Its primary key is the claim: of several processes checking at once,
 *   exactly one inserts the row and queues the alert, and exactly one deletes it and queues `back`.
 */
export function logSourcesMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('log_sources'))
        .addColumn('host', 'varchar(255)', (c) => c.notNull())
        .addColumn('program', 'varchar(255)', (c) => c.notNull())
        .addColumn('component', 'varchar(255)')
        .addColumn('key_id', 'integer')
        .addColumn('first_seen_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('last_seen_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('lines', 'bigint', (c) => c.notNull())
        .addColumn('errors', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('log_sources_host_program', ['host', 'program'])
        .execute();
      await db.schema.createIndex('log_sources_last_seen').on('log_sources').columns(['last_seen_at', 'id']).execute();
      await db.schema.createIndex('log_sources_component').on('log_sources').columns(['component', 'id']).execute();
      await db.schema.alterTable('alert_rules').addColumn('silent_minutes', 'integer').execute();
      await db.schema.createTable('log_source_silences')
        .addColumn('rule_id', 'integer', (c) => c.notNull())
        .addColumn('source_id', 'integer', (c) => c.notNull())
        .addColumn('last_seen_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('silent_at', 'varchar(32)', (c) => c.notNull())
        .addPrimaryKeyConstraint('log_source_silences_pkey', ['rule_id', 'source_id'])
        .execute();
    },
  };
}
