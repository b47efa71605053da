import type { Kysely } from 'kysely';

/**
 * The billing bucket a user belongs to (docs/api.md#billing-buckets): `users.bucket_id`, null for
 * none. Added, not changed: older processes neither read nor write it.
 */
export const userBucketsMigration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('users').addColumn('bucket_id', 'integer', (c) => c.references('billing_buckets.id')).execute();
    await db.schema.createIndex('users_bucket').on('users').column('bucket_id').execute();
  },
};
