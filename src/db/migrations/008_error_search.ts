import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * A text index for the error list's `q` (a case-insensitive substring of the class or the message),
 * where the database has one (docs/architecture.md#error-search): the list then counts and finds the
 * errors holding a text from the index instead of lower-casing every error's message.
 */
export function errorSearchMigration(dialect: Dialect) {
  const createErrorSearch = dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
    /**
     * An FTS5 trigram index of the folded class and message (case-sensitive: they are folded already,
     * by the same function as the list's `q`), contentless: it keeps the index only, not a second copy
     * of the text. Triggers keep it in step; an upsert that leaves the text as it was changes nothing.
     */
    async sqlite(db) {
      const run = (statement: string) => sql.raw(statement).execute(db);
      await run(`create virtual table error_search using fts5(error_class, message, content='', contentless_delete=1, tokenize='trigram case_sensitive 1')`);
      const add = (row: 'new' | 'old') => `insert into error_search (rowid, error_class, message) values (${row}.id, unicode_lower(${row}.error_class), unicode_lower(${row}.message));`;
      const remove = (row: 'new' | 'old') => `delete from error_search where rowid = ${row}.id;`;
      await run(`create trigger infrastructure_errors_search_insert after insert on infrastructure_errors begin ${add('new')} end`);
      await run(`create trigger infrastructure_errors_search_delete after delete on infrastructure_errors begin ${remove('old')} end`);
      await run(`create trigger infrastructure_errors_search_update after update of error_class, message on infrastructure_errors
        when old.error_class <> new.error_class or old.message <> new.message begin ${remove('old')} ${add('new')} end`);
      await run('insert into error_search (rowid, error_class, message) select id, unicode_lower(error_class), unicode_lower(message) from infrastructure_errors');
    },

    // PostgreSQL's came with migration 009.
    postgres: async () => {},
  });

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.migrations.atomically(db, (trx) => createErrorSearch(trx));
    },
  };
}
