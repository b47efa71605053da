import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

export function initialMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('users'))
        .addColumn('login', 'varchar(40)', (c) => c.notNull().unique())
        .addColumn('email', 'varchar(254)', (c) => c.notNull().unique())
        .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
        .addColumn('first_name', 'varchar(255)', (c) => c.notNull().defaultTo(''))
        .addColumn('last_name', 'varchar(255)', (c) => c.notNull().defaultTo(''))
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('role', 'varchar(16)', (c) => c.notNull())
        .addColumn('time_zone', 'varchar(64)')
        .addColumn('locale', 'varchar(16)')
        .addColumn('api_key_hash', 'varchar(64)')
        .addColumn('session_epoch', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('activated_at', 'varchar(32)')
        .addColumn('suspend_at', 'varchar(32)')
        .addColumn('deleted_at', 'varchar(32)')
        .addColumn('password_changed_at', 'varchar(32)')
        .execute();

      await dialect.tables.addIdColumn(db.schema.createTable('infrastructure_errors'))
        .addColumn('fingerprint', 'char(64)', (c) => c.notNull().unique())
        .addColumn('error_class', 'varchar(255)', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('backtrace', 'text', (c) => c.notNull())
        .addColumn('counter', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('reported', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('settings')
        .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
