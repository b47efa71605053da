import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Where and how each account was signed in to (docs/security.md#the-last-access-log): `last_access_log`,
 * one row per sign-in (a console sign-in, a Basic verification not answered from the verification
 * cache) and per refused one of a known user, the latest few per user kept (users/last-access-log.ts).
 * And `account_unlock_tokens`: the one unlock token mailed when an account's name locks
 * (docs/security.md#unlocking-by-mail), its SHA-256 only, single use, expiring.
 *
 * Neither moves the credentials' or the users' version: writing them changes no credential and no
 * users page.
 */
export function lastAccessLogMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('last_access_log'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('ip', 'varchar(64)', (c) => c.notNull())
        .addColumn('credential', 'varchar(16)', (c) => c.notNull())
        .addColumn('user_agent', 'varchar(255)')
        .addColumn('success', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('last_access_log_user').on('last_access_log').columns(['user_id', 'id']).execute();
      await db.schema.createTable('account_unlock_tokens')
        .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
        .addColumn('token_hash', 'varchar(64)', (c) => c.notNull())
        .addColumn('expires_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .execute();
    },
  };
}
