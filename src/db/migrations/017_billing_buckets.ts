import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * OnApp's billing buckets (docs/api.md#billing-buckets): cmi does no billing, so a bucket is a label
 * with OnApp's fields, stored and returned as given. Flags are 0/1 integers like every flag
 * (db/schema.ts); the price a double. Notifies changes like `users` (migration 003).
 */
export function billingBucketsMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('billing_buckets'))
        .addColumn('label', 'varchar(255)', (c) => c.notNull())
        .addColumn('currency_code', 'varchar(3)', (c) => c.notNull())
        .addColumn('monthly_price', 'double precision', (c) => c.notNull())
        .addColumn('show_price', 'integer', (c) => c.notNull())
        .addColumn('allows_kms', 'integer', (c) => c.notNull())
        .addColumn('allows_mak', 'integer', (c) => c.notNull())
        .addColumn('allows_own', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await dialect.changeNotifications.create(db, ['billing_buckets'], 'users');
    },
  };
}
