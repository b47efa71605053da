import type { Kysely } from 'kysely';

/**
 * The brute-force model of docs/security.md#brute-force: `failed_logins` counts failures by account
 * name (as typed, lower case) and by address, `login_addresses` remembers where each account has
 * logged in from. `login_failures` (migration 002) is left for processes of an older cmi still
 * serving during an upgrade; this version neither reads nor writes it.
 */
export const loginAddressesMigration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('failed_logins')
      // '' in `account`: the address's counter across names; '' in `address`: the name's across addresses.
      .addColumn('account', 'varchar(254)', (c) => c.notNull())
      .addColumn('address', 'varchar(100)', (c) => c.notNull())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('window_started_at', 'varchar(32)', (c) => c.notNull())
      .addPrimaryKeyConstraint('failed_logins_pkey', ['account', 'address'])
      .execute();
    await db.schema.createIndex('failed_logins_window_started_at').on('failed_logins').column('window_started_at').execute();

    await db.schema
      .createTable('login_addresses')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('address', 'varchar(100)', (c) => c.notNull())
      .addColumn('last_success_at', 'varchar(32)', (c) => c.notNull())
      .addPrimaryKeyConstraint('login_addresses_pkey', ['user_id', 'address'])
      .execute();
  },
};
