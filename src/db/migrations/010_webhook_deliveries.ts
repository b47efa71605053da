import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Reports and alerts (docs/reporting-and-alerts.md):
 * - `webhook_deliveries`: the durable outbox. A delivery keeps the exact body and id it is sent with
 *   on every try; `lease_owner`/`lease_until` let exactly one process send it at a time, whatever
 *   many serve the database; `next_attempt_at` is when it may be tried again (exponential backoff).
 * - `error_alerts`: per error, the spike window (when it started, occurrences counted in it) and
 *   when the last spike alert went out (the cooldown).
 * - `webhook_gone_urls`: receivers that answered 410; nothing more is sent to them.
 */
export function webhookDeliveriesMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('webhook_deliveries'))
        .addColumn('delivery_id', 'varchar(36)', (c) => c.notNull().unique())
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('error_id', 'integer', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('state', 'varchar(16)', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('last_status', 'integer')
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('next_attempt_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('delivered_at', 'varchar(32)')
        .addColumn('lease_owner', 'varchar(36)')
        .addColumn('lease_until', 'varchar(32)')
        .execute();
      await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at', 'id']).execute();
      await db.schema.createIndex('webhook_deliveries_error').on('webhook_deliveries').columns(['error_id', 'state', 'id']).execute();
      await db.schema.createIndex('webhook_deliveries_lease').on('webhook_deliveries').column('lease_owner').execute();

      await db.schema
        .createTable('error_alerts')
        .addColumn('error_id', 'integer', (c) => c.primaryKey())
        .addColumn('window_started_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('window_count', 'integer', (c) => c.notNull())
        .addColumn('spike_alerted_at', 'varchar(32)')
        .execute();

      await db.schema
        .createTable('webhook_gone_urls')
        .addColumn('url', 'varchar(2048)', (c) => c.primaryKey())
        .addColumn('gone_at', 'varchar(32)', (c) => c.notNull())
        .execute();
    },
  };
}
