import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * OnApp's user groups (docs/api.md#user-groups):
 * - `user_groups`: a label, a unique identifier and the billing bucket its members are meant for (null for none).
 * - `user_group_roles`: the roles a group holds; they apply to its members (docs/security.md#user-groups).
 * - `users.user_group_id`: the group a user belongs to, null for none. Added, not changed: older
 *   processes neither read nor write it.
 *
 * The users list's filters (docs/api.md#users-list-filters) read `users` by `(status, id)` and
 * `(user_group_id, id)` in id order; `role_id` reads migration 016's `user_roles_role`.
 *
 * A change to a group, to what it holds or to who belongs to it decides what its members may do, so
 * it moves the credentials version (migrations 015, 019): every process drops the permissions it
 * cached at once. `users` signals already, so a new `user_group_id` does too.
 */
export function userGroupsMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('user_groups'))
        .addColumn('label', 'varchar(255)', (c) => c.notNull())
        .addColumn('identifier', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('bucket_id', 'integer', (c) => c.references('billing_buckets.id'))
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('user_groups_bucket').on('user_groups').column('bucket_id').execute();
      await db.schema
        .createTable('user_group_roles')
        .addColumn('user_group_id', 'integer', (c) => c.notNull().references('user_groups.id').onDelete('cascade'))
        .addColumn('role_id', 'integer', (c) => c.notNull().references('roles.id'))
        .addPrimaryKeyConstraint('user_group_roles_pkey', ['user_group_id', 'role_id'])
        .execute();
      await db.schema.createIndex('user_group_roles_role').on('user_group_roles').columns(['role_id', 'user_group_id']).execute();
      await db.schema.alterTable('users').addColumn('user_group_id', 'integer', (c) => c.references('user_groups.id')).execute();
      await db.schema.createIndex('users_user_group').on('users').columns(['user_group_id', 'id']).execute();
      await db.schema.createIndex('users_status').on('users').columns(['status', 'id']).execute();
      // On PostgreSQL the users channel's notifying trigger, on SQLite the credentials' counter.
      await dialect.changeNotifications.addCredentialChanges(db, ['user_groups', 'user_group_roles']);
    },
  };
}
