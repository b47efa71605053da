import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Several named API keys per user, as OnApp has them (docs/api.md#api-keys): `user_api_keys`, one
 * row per key with its SHA-256 (never the key), its description, when it was made and when it was
 * last used. Each user's one key of `users.api_key_hash` becomes a key of its own, described
 * `default` and marked `is_default` (the key `make_new_api_key` makes anew), so every key keeps
 * working. `users.api_key_hash` stays as it was: processes of the previous version read it during an
 * upgrade, and cmi keeps it equal to the default key's hash (users/users.store.ts).
 *
 * A new, revoked or moved key changes the credentials version as a change to a user does (migrations
 * 015, 019), so every process refuses a revoked key at once; writing `last_used_at` does not
 * (docs/security.md#suspend-now-means-now).
 */
export function userApiKeysMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('user_api_keys'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('description', 'varchar(255)', (c) => c.notNull())
        .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('last_used_at', 'varchar(32)')
        .execute();
      await db.schema.createIndex('user_api_keys_user').on('user_api_keys').columns(['user_id', 'id']).execute();
      // At most one default key per user.
      await db.schema.createIndex('user_api_keys_default').on('user_api_keys').column('user_id').unique().where(sql.ref('is_default'), '=', 1).execute();
      const at = new Date().toISOString();
      await sql`
        insert into user_api_keys (user_id, description, key_hash, is_default, created_at)
        select id, 'default', api_key_hash, 1, ${at} from users where api_key_hash is not null order by id`.execute(db);
      await dialect.changeNotifications.addCredentialChanges(db, ['user_api_keys'], ['user_id', 'key_hash']);
    },
  };
}
