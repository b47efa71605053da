import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * A user's allowed addresses, OnApp's `user_white_lists` (docs/security.md#allowed-addresses): one row
 * per address or CIDR range, stored in its normal form (shared/ip-ranges.ts), at most once per user.
 * A user with at least one row is refused from every other address, with every credential, so a
 * change to the table moves the credentials version like a change to a user (migrations 015, 019,
 * 021): every process drops the verifications it holds, with the list it read beside them.
 */
export function userWhiteListsMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('user_white_lists'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('ip', 'varchar(64)', (c) => c.notNull())
        .addColumn('description', 'varchar(255)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('user_white_lists_user_ip').on('user_white_lists').columns(['user_id', 'ip']).unique().execute();
      await dialect.changeNotifications.addCredentialChanges(db, ['user_white_lists']);
    },
  };
}
