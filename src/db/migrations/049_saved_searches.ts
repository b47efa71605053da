import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Saved searches (docs/search.md#saved-searches): a user's named query in the search language, seen by
 * others only when `shared` (0 or 1); a name once per user. They go with their user.
 */
export function savedSearchesMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('saved_searches'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'varchar(100)', (c) => c.notNull())
        .addColumn('query', 'varchar(1000)', (c) => c.notNull())
        .addColumn('shared', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .addUniqueConstraint('saved_searches_user_name', ['user_id', 'name'])
        .execute();
      await db.schema.createIndex('saved_searches_shared_name').on('saved_searches').columns(['shared', 'name']).execute();
    },
  };
}
