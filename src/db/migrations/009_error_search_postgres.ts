import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * The GIN index of pg_trgm trigrams over error_search, creating the extension (in `public`) when the
 * database allows (docs/operations.md#running-on-postgresql); when it does not, or the extension's
 * schema is not this user's to use, the migration goes on without the index. Never created in cmi's
 * own schema: dropping that would drop the extension from every other schema's index.
 */
async function createTrigramIndex(db: Kysely<unknown>): Promise<void> {
  await sql`savepoint trigrams`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);
    const found = await sql<{ schema: string }>`
      select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace
      where e.extname = 'pg_trgm'`.execute(db);
    const operators = sql.raw(`"${(found.rows[0]?.schema ?? 'public').replaceAll('"', '""')}".gin_trgm_ops`);
    await sql`create index error_search_trigrams on error_search using gin (error_class ${operators}, message ${operators})`.execute(db);
    await sql`release savepoint trigrams`.execute(db);
  } catch {
    await sql`rollback to savepoint trigrams`.execute(db);
  }
}

/**
 * The text index for the error list's `q` on PostgreSQL (docs/architecture.md#error-search), which
 * migration 008 gave SQLite only: a table of each error's lower-cased class and message with a
 * trigram index. Nothing on SQLite.
 */
export function errorSearchPostgresMigration(dialect: Dialect) {
  const createErrorSearch = dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
    // SQLite's came with migration 008.
    sqlite: async () => {},

    /**
     * `error_search`: each error's lower-cased class and message, kept in step by
     * triggers (statement level over transition tables for inserts and deletes, as migration 007's;
     * per row for a changed text), with a pg_trgm GIN index where the database lets cmi create the
     * extension. Without it the narrow table is still read instead of every error's whole row.
     */
    async postgres(db) {
      const run = (statement: string) => sql.raw(statement).execute(db);
      const fn = (name: string, body: string) => run(`create or replace function ${name}() returns trigger language plpgsql as $$ begin ${body} return null; end $$`);
      await run('create table error_search (id bigint primary key, error_class text not null, message text not null)');
      await fn('error_search_added', 'insert into error_search (id, error_class, message) select id, lower(error_class), lower(message) from added;');
      await fn('error_search_removed', 'delete from error_search where id in (select id from removed);');
      await fn('error_search_changed', 'update error_search set error_class = lower(new.error_class), message = lower(new.message) where id = new.id;');
      await fn('error_search_truncated', 'delete from error_search;');
      await run('create trigger infrastructure_errors_search_insert after insert on infrastructure_errors referencing new table as added for each statement execute function error_search_added()');
      await run('create trigger infrastructure_errors_search_delete after delete on infrastructure_errors referencing old table as removed for each statement execute function error_search_removed()');
      await run(`create trigger infrastructure_errors_search_update after update of error_class, message on infrastructure_errors
        for each row when (old.error_class <> new.error_class or old.message <> new.message) execute function error_search_changed()`);
      await run('create trigger infrastructure_errors_search_truncate after truncate on infrastructure_errors for each statement execute function error_search_truncated()');
      await run('insert into error_search (id, error_class, message) select id, lower(error_class), lower(message) from infrastructure_errors');
      await createTrigramIndex(db);
    },
  });

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.migrations.atomically(db, (trx) => createErrorSearch(trx));
    },
  };
}
