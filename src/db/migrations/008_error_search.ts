import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * A text index for the error list's `q` (a case-insensitive substring of the class or the message),
 * where the database has one (docs/architecture.md#error-search): the list then counts and finds the
 * errors holding a text from the index instead of lower-casing every error's message.
 */
export function errorSearchMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.atomically(db, (trx) => dialect.createErrorSearch(trx, '008'));
    },
  };
}
