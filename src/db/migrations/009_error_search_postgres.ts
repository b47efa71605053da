import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * The text index for the error list's `q` on PostgreSQL (docs/architecture.md#error-search), which
 * migration 008 gave SQLite only: a table of each error's lower-cased class and message with a
 * trigram index. Nothing on SQLite.
 */
export function errorSearchPostgresMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.atomically(db, (trx) => dialect.createErrorSearch(trx, '009'));
    },
  };
}
