import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** SQLite: the trigger statement that adds `delta` to each `[dimension, value]` (SQL expressions) of `error_counts`. */
const addToErrorCountsOfRow = (rows: Array<[string, string]>, delta: number) => `
  insert into error_counts (dimension, value, errors)
    values ${rows.map(([dimension, value]) => `(${dimension}, ${value}, ${delta})`).join(', ')}
    on conflict (dimension, value) do update set errors = errors + excluded.errors;`;

/** SQLite: the `error_counts` rows an error adds to: all, its reported state and its class. */
const errorRows = (row: 'new' | 'old'): Array<[string, string]> => [
  ["'all'", "''"],
  ["'reported'", `cast(${row}.reported as varchar(255))`],
  ["'error_class'", `${row}.error_class`],
];

/**
 * PostgreSQL: the trigger statement that adds the signed counts of `counts` (a query of dimension,
 * value, n) to `error_counts`, in (dimension, value) order, so concurrent statements lock rows in one order.
 */
const addToErrorCountsOfRows = (counts: string) => `
  insert into error_counts (dimension, value, errors)
    select dimension, value, sum(n) from (${counts}) as counts group by dimension, value having sum(n) <> 0
    order by dimension, value
    on conflict (dimension, value) do update set errors = error_counts.errors + excluded.errors;`;

/** PostgreSQL: the `error_counts` rows the errors in `rows` add to (`sign` 1) or take from (-1): all, reported, class. */
const errorCounts = (rows: string, sign: 1 | -1) => `
  select 'all' as dimension, '' as value, ${sign} * count(*) as n from ${rows}
  union all select 'reported', reported::varchar, ${sign} * count(*) from ${rows} group by reported
  union all select 'error_class', error_class, ${sign} * count(*) from ${rows} group by error_class`;

/**
 * `error_counts`: how many errors there are in all (`all`, value ''), per `reported` ('0', '1'), per
 * `error_class`, and per `host` and `component` an error was seen on (its `error_breakdown` rows).
 * Triggers in the database (one set per database) keep them exact, so the list's X-Total for no filter
 * or one of these filters is one row read, not a count over every error (docs/architecture.md#error-counts).
 * Every trigger adds a signed count (an upsert), so concurrent writers only wait for each other's row
 * lock; the `all` row, first in every statement's order, is the first lock each adding statement takes.
 */
export function errorCountsMigration(dialect: Dialect) {
  /** Triggers that keep `error_counts` exact. */
  const createErrorCountTriggers = dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
    async sqlite(db) {
      const trigger = (name: string, body: string) => sql.raw(`create trigger ${name} ${body}`).execute(db);
      await trigger('infrastructure_errors_counts_insert', `after insert on infrastructure_errors begin ${addToErrorCountsOfRow(errorRows('new'), 1)} end`);
      await trigger('infrastructure_errors_counts_delete', `after delete on infrastructure_errors begin ${addToErrorCountsOfRow(errorRows('old'), -1)} end`);
      // Only a change of state or class moves an error between rows; the upsert of a repeat sets neither.
      await trigger('infrastructure_errors_counts_move', `after update of reported, error_class on infrastructure_errors
        when old.reported <> new.reported or old.error_class <> new.error_class begin
          ${addToErrorCountsOfRow(errorRows('old').slice(1), -1)}
          ${addToErrorCountsOfRow(errorRows('new').slice(1), 1)}
        end`);
      // cmi never changes a breakdown row's dimension or value, only its counts.
      await trigger('error_breakdown_counts_insert', `after insert on error_breakdown begin ${addToErrorCountsOfRow([['new.dimension', 'new.value']], 1)} end`);
      await trigger('error_breakdown_counts_delete', `after delete on error_breakdown begin ${addToErrorCountsOfRow([['old.dimension', 'old.value']], -1)} end`);
    },

    /**
     * Statement-level triggers with transition tables for inserts and deletes (one upsert per
     * statement, as migration 004's); row level for a change of state or class (transition tables are
     * not allowed with a column list). The upsert of a repeat sets neither column: no trigger runs.
     */
    async postgres(db) {
      const run = (statement: string) => sql.raw(statement).execute(db);
      const fn = (name: string, body: string) => run(`create or replace function ${name}() returns trigger language plpgsql as $$ begin ${body} return null; end $$`);
      await fn('error_counts_added', addToErrorCountsOfRows(errorCounts('added', 1)));
      await fn('error_counts_removed', addToErrorCountsOfRows(errorCounts('removed', -1)));
      // Per row, so as plain as can be: each changed dimension's two rows, in value order.
      const move = (column: string) => `
        if old.${column} <> new.${column} then
          insert into error_counts (dimension, value, errors)
            select '${column}', value, delta from (values (old.${column}::varchar, -1), (new.${column}::varchar, 1)) as moved (value, delta) order by value
            on conflict (dimension, value) do update set errors = error_counts.errors + excluded.errors;
        end if;`;
      await fn('error_counts_moved', `${move('reported')} ${move('error_class')}`);
      await fn('error_counts_seen', addToErrorCountsOfRows('select dimension, value, count(*) as n from added group by dimension, value'));
      await fn('error_counts_unseen', addToErrorCountsOfRows('select dimension, value, -count(*) as n from removed group by dimension, value'));
      await fn('error_counts_truncated', `delete from error_counts where (TG_TABLE_NAME = 'error_breakdown') = (dimension in ('host', 'component'));`);
      for (const [table, added, removed] of [['infrastructure_errors', 'error_counts_added', 'error_counts_removed'], ['error_breakdown', 'error_counts_seen', 'error_counts_unseen']] as const) {
        await run(`create trigger ${table}_counts_insert after insert on ${table} referencing new table as added for each statement execute function ${added}()`);
        await run(`create trigger ${table}_counts_delete after delete on ${table} referencing old table as removed for each statement execute function ${removed}()`);
        await run(`create trigger ${table}_counts_truncate after truncate on ${table} for each statement execute function error_counts_truncated()`);
      }
      await run(`create trigger infrastructure_errors_counts_move after update of reported, error_class on infrastructure_errors
        for each row when (old.reported <> new.reported or old.error_class <> new.error_class) execute function error_counts_moved()`);
    },
  });

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Atomic, as migration 004: a row written between the triggers and the backfill is counted once.
      await dialect.migrations.atomically(db, async (trx) => {
        await sql`
          create table error_counts (
            dimension varchar(16) not null,
            value varchar(255) not null,
            errors integer not null,
            primary key (dimension, value)
          ) ${sql.raw(dialect.tables.keyOrdered)}`.execute(trx);
        await createErrorCountTriggers(trx);
        await sql`
          insert into error_counts (dimension, value, errors)
          select 'all', '', count(*) from infrastructure_errors
          union all
          select 'reported', cast(reported as varchar(255)), count(*) from infrastructure_errors group by reported
          union all
          select 'error_class', error_class, count(*) from infrastructure_errors group by error_class
          union all
          select dimension, value, count(*) from error_breakdown group by dimension, value`.execute(trx);
      });
    },
  };
}
