import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * The second factor (docs/security.md#second-factor): `user_two_factor`, one row per user with a TOTP
 * secret (pending until `confirmed_at`, and the last time step accepted, so a code is accepted once
 * in every process); `user_recovery_codes`, the SHA-256 of each single-use recovery code; and
 * `users.totp_enabled`, kept equal to "a confirmed row exists" by the same transactions, so the
 * password check reads it with the user and a change to it moves the users' and credentials'
 * versions as every change to a user does (migrations 015, 030). Also OnApp's YubiKeys:
 * `user_yubi_keys` (each key's public id) and `users.registered_yubikey`.
 */
export function twoFactorMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('users').addColumn('totp_enabled', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.createTable('user_two_factor')
        .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
        .addColumn('secret', 'varchar(64)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('confirmed_at', 'varchar(32)')
        .addColumn('last_step', 'bigint')
        .execute();
      await dialect.tables.addIdColumn(db.schema.createTable('user_recovery_codes'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('code_hash', 'varchar(64)', (c) => c.notNull())
        .addColumn('used_at', 'varchar(32)')
        .execute();
      await db.schema.createIndex('user_recovery_codes_user').on('user_recovery_codes').columns(['user_id', 'code_hash']).execute();
      // OnApp's YubiKeys (docs/security.md#yubikeys): the key's public id only; users.registered_yubikey
      // is kept equal to "the user has one" by the same transactions.
      await db.schema.alterTable('users').addColumn('registered_yubikey', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await dialect.tables.addIdColumn(db.schema.createTable('user_yubi_keys'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('label', 'varchar(255)', (c) => c.notNull())
        .addColumn('key_id', 'varchar(16)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('last_used', 'varchar(32)')
        .execute();
      await db.schema.createIndex('user_yubi_keys_user').on('user_yubi_keys').columns(['user_id', 'key_id']).unique().execute();
    },
  };
}
