import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** SQLite: the WHEN of a delete trigger that stands aside while a bulk delete keeps what it keeps itself. */
const UNLESS_BULK = 'when not exists (select 1 from error_bulk_delete)';

/**
 * Bulk changes by filter keep every count exact per statement, not per row
 * (docs/architecture.md#error-counts).
 *
 * PostgreSQL: a change of `reported` or `error_class` keeps `error_counts` (migration 007) exact per
 * statement, not per row (docs/architecture.md#error-counts). Migration 007's row trigger upserted
 * the same two count rows once per changed error: marking 300,000 errors reported in one statement
 * stacked 300,000 versions of one row in one transaction, each upsert walking them, and did not end in
 * ten minutes. Now one statement trigger over the transition tables takes what the rows were from what
 * they became per count row, and upserts only the rows that moved, in (dimension, value) order, as
 * migration 007's insert and delete triggers do. Transition tables allow no column list, so every
 * update of the errors runs it (a batch's upsert, which moves nothing, adds no row).
 *
 * SQLite has row triggers only: deleting 300,000 of 1,000,000 errors ran five trigger statements per
 * error and two per breakdown row. `error_bulk_delete` holds a row only inside the transaction of a
 * bulk delete (`tracker/tracker-deletes.store.ts`), which first takes the deleted rows' counts, text index
 * entries and triage rows away in one aggregated statement each; meanwhile the delete triggers of
 * migrations 007, 008 and 023, remade here, stand aside. No other writer can see the row: it is
 * written and removed in one transaction, and SQLite has one writer at a time, so any other delete,
 * from any process, the CLI or a hand-written statement, still runs the triggers. Changes of state
 * stay per row on SQLite: 333,333 errors marked reported took 3.3 s
 * (docs/benchmarks.md#bulk-changes-by-filter).
 */
export function statementErrorCountsMigration(dialect: Dialect) {
  return {
    up: dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
      async sqlite(db) {
        const run = (statement: string) => sql.raw(statement).execute(db);
        await run('create table error_bulk_delete (held integer primary key)');
        const counts = (rows: Array<[string, string]>) => `insert into error_counts (dimension, value, errors)
          values ${rows.map(([dimension, value]) => `(${dimension}, ${value}, -1)`).join(', ')}
          on conflict (dimension, value) do update set errors = errors + excluded.errors;`;
        const triggers: Array<[name: string, table: string, body: string]> = [
          ['infrastructure_errors_counts_delete', 'infrastructure_errors', counts([["'all'", "''"], ["'reported'", 'cast(old.reported as varchar(255))'], ["'error_class'", 'old.error_class']])],
          ['infrastructure_errors_search_delete', 'infrastructure_errors', 'delete from error_search where rowid = old.id;'],
          ['infrastructure_errors_triage_delete', 'infrastructure_errors', 'delete from error_triage where error_id = old.id;'],
          ['error_breakdown_counts_delete', 'error_breakdown', counts([['old.dimension', 'old.value']])],
        ];
        for (const [name, table, body] of triggers) {
          await run(`drop trigger ${name}`);
          await run(`create trigger ${name} after delete on ${table} ${UNLESS_BULK} begin ${body} end`);
        }
      },
      async postgres(db) {
        // Atomic: an update runs under the row trigger or the statement trigger, never both or neither.
        await dialect.migrations.atomically(db, async (trx) => {
          const run = (statement: string) => sql.raw(statement).execute(trx);
          // The counts beside the errors whatever the writer's search_path (a DBA in psql updating
          // "schema".infrastructure_errors, as migration 012's notifications allow): cmi's own
          // statements, in the table's schema, run the statement as planned once.
          const upsert = (table: string) => `insert into ${table} as kept (dimension, value, errors)
              select dimension, value, sum(n) from (
                select 'reported' as dimension, reported::varchar as value, -count(*) as n from updated_from group by reported
                union all select 'reported', reported::varchar, count(*) from updated_to group by reported
                union all select 'error_class', error_class, -count(*) from updated_from group by error_class
                union all select 'error_class', error_class, count(*) from updated_to group by error_class
              ) as counts group by dimension, value having sum(n) <> 0
              order by dimension, value
              on conflict (dimension, value) do update set errors = kept.errors + excluded.errors`;
          await run(`create or replace function error_counts_updated() returns trigger language plpgsql as $$ begin
            if TG_TABLE_SCHEMA = current_schema() then
              ${upsert('error_counts')};
            else
              execute format('${upsert('%I.error_counts').replaceAll("'", "''")}', TG_TABLE_SCHEMA);
            end if;
            return null; end $$`);
          await run('drop trigger infrastructure_errors_counts_move on infrastructure_errors');
          await run('drop function error_counts_moved()');
          await run(`create trigger infrastructure_errors_counts_update after update on infrastructure_errors
            referencing old table as updated_from new table as updated_to for each statement execute function error_counts_updated()`);
        });
      },
    }),
  };
}
