import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * The search language's free text is matched in the backtrace too (docs/search.md#free-text), from
 * the same text index as the class and the message (migrations 008 and 009): each error's first
 * BACKTRACE_SEARCHED characters of its backtrace, folded, join them. Bounded so that the index of a
 * million errors stays near the size of their messages' (a backtrace is up to 256 frames).
 */
export const BACKTRACE_SEARCHED = 4096;

const UNLESS_BULK = 'when not exists (select 1 from error_bulk_delete)';

export function errorSearchBacktraceMigration(dialect: Dialect) {
  return {
    up: dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
      async sqlite(db) {
        await dialect.migrations.atomically(db, async (trx) => {
          const run = (statement: string) => sql.raw(statement).execute(trx);
          for (const name of ['insert', 'delete', 'update']) await run(`drop trigger infrastructure_errors_search_${name}`);
          await run('drop table error_search');
          await run(`create virtual table error_search using fts5(error_class, message, backtrace, content='', contentless_delete=1, tokenize='trigram case_sensitive 1')`);
          const folded = (row: string) => `unicode_lower(${row}error_class), unicode_lower(${row}message), unicode_lower(substr(${row}backtrace, 1, ${BACKTRACE_SEARCHED}))`;
          const add = (row: 'new' | 'old') => `insert into error_search (rowid, error_class, message, backtrace) values (${row}.id, ${folded(`${row}.`)});`;
          const remove = (row: 'new' | 'old') => `delete from error_search where rowid = ${row}.id;`;
          await run(`create trigger infrastructure_errors_search_insert after insert on infrastructure_errors begin ${add('new')} end`);
          // As migration 026 made it: a bulk delete clears the index itself (tracker-deletes.store.ts).
          await run(`create trigger infrastructure_errors_search_delete after delete on infrastructure_errors ${UNLESS_BULK} begin ${remove('old')} end`);
          await run(`create trigger infrastructure_errors_search_update after update of error_class, message, backtrace on infrastructure_errors
            when old.error_class <> new.error_class or old.message <> new.message or old.backtrace <> new.backtrace begin ${remove('old')} ${add('new')} end`);
          await run(`insert into error_search (rowid, error_class, message, backtrace) select id, ${folded('')} from infrastructure_errors`);
        });
      },
      async postgres(db) {
        await dialect.migrations.atomically(db, async (trx) => {
          const run = (statement: string) => sql.raw(statement).execute(trx);
          const folded = (row: string) => `lower(left(${row}backtrace, ${BACKTRACE_SEARCHED}))`;
          await run(`alter table error_search add column backtrace text not null default ''`);
          await run(`create or replace function error_search_added() returns trigger language plpgsql as $$ begin
            insert into error_search (id, error_class, message, backtrace) select id, lower(error_class), lower(message), ${folded('')} from added; return null; end $$`);
          await run(`create or replace function error_search_changed() returns trigger language plpgsql as $$ begin
            update error_search set error_class = lower(new.error_class), message = lower(new.message), backtrace = ${folded('new.')} where id = new.id; return null; end $$`);
          await run('drop trigger infrastructure_errors_search_update on infrastructure_errors');
          await run(`create trigger infrastructure_errors_search_update after update on infrastructure_errors
            for each row when (old.error_class <> new.error_class or old.message <> new.message or old.backtrace <> new.backtrace) execute function error_search_changed()`);
          await run(`update error_search set backtrace = ${folded('e.')} from infrastructure_errors as e where e.id = error_search.id`);
          // The trigram index over the three, where migration 009 could make one.
          const index = await sql<{ definition: string }>`select indexdef as definition from pg_indexes where tablename = 'error_search' and indexname = 'error_search_trigrams' and schemaname = current_schema()`.execute(trx);
          const definition = index.rows[0]?.definition;
          if (definition !== undefined) {
            const operators = /message\s+(\S+)\)/.exec(definition)?.[1];
            if (operators !== undefined) {
              await run('drop index error_search_trigrams');
              await run(`create index error_search_trigrams on error_search using gin (error_class ${operators}, message ${operators}, backtrace ${operators})`);
            }
          }
        });
      },
    }),
  };
}
