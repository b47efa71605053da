import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * The change notifications of migrations 003 and 011 name the changed table's schema, not the writing
 * session's current schema: a change made with another search_path (a DBA in psql) reaches the
 * processes' caches too (docs/architecture.md#how-cached-pages-stay-right). Nothing on SQLite.
 */
export function notifyTableSchemaMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>) {
      await dialect.changeNotifications.createFunction(db, 'users');
      await dialect.changeNotifications.createFunction(db, 'tracker');
    },
  };
}
