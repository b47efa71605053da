import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** The permission the password policy adds to the catalogue (roles/permissions.ts), frozen here as migration 016 froze its own. */
const PERMISSIONS: ReadonlyArray<readonly [number, string, string]> = [
  [40, 'password_policy.manage', 'See and change the password policy'],
];

/**
 * The password policy (docs/security.md#password-policy): the policy itself is one row of
 * `settings` (key `password_policy`, users/password-policy.store.ts), so it needs no table;
 * `password_history` keeps the argon2id hashes of each user's earlier passwords (never served), the
 * latest few per user, for the policy's `history` rule. Administrators hold the new permission.
 */
export function passwordPolicyMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const at = new Date().toISOString();
      await dialect.tables.addIdColumn(db.schema.createTable('password_history'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('password_history_user').on('password_history').columns(['user_id', 'id']).execute();
      const anyDb = db as Kysely<Record<string, Record<string, unknown>>>;
      await anyDb.insertInto('permissions').values(PERMISSIONS.map(([id, identifier, label]) => ({ id, identifier, label, created_at: at, updated_at: at }))).execute();
      await anyDb.insertInto('role_permissions').values(PERMISSIONS.map(([id]) => ({ role_id: 1, permission_id: id }))).execute();
    },
  };
}
