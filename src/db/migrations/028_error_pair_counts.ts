import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** SQLite: the WHEN of a delete trigger that stands aside while a bulk delete keeps the counts itself (migration 026). */
const UNLESS_BULK = 'when not exists (select 1 from error_bulk_delete)';

/** SQLite: one upsert of signed counts (a query of dimension, value, n) into `error_counts`. */
const upsertOfRow = (counts: string) => `insert into error_counts (dimension, value, errors) ${counts}
  on conflict (dimension, value) do update set errors = errors + excluded.errors;`;

/** SQLite: the counts error `row` ('new' or 'old') adds to (`sign` 1) or takes from (-1), with those of its breakdown rows by its state. */
const errorRowCounts = (row: 'new' | 'old', sign: 1 | -1, { all = true } = {}) => [
  ...(all ? [`select 'all', '', ${sign}`] : []),
  `select 'reported', cast(${row}.reported as varchar(255)), ${sign}`,
  `select 'error_class', ${row}.error_class, ${sign}`,
  `select 'error_class.' || ${row}.reported, ${row}.error_class, ${sign}`,
  `select dimension || '.' || ${row}.reported, value, ${sign} from error_breakdown where error_id = ${row}.id`,
].join(' union all ');

/** SQLite: the counts a breakdown row adds to or takes from: its own, and its pair with its error's state (when the error is there). */
const breakdownRowCounts = (row: 'new' | 'old', sign: 1 | -1) =>
  `select ${row}.dimension, ${row}.value, ${sign} union all select ${row}.dimension || '.' || reported, ${row}.value, ${sign} from infrastructure_errors where id = ${row}.error_id`;

/** PostgreSQL: the pair counts the errors of transition table `rows` add (1) or take (-1): by class, and by each host and component they were seen on. */
const errorPairCounts = (rows: string, sign: 1 | -1, breakdown = 'error_breakdown') => `
  select 'error_class.' || reported, error_class, ${sign} * count(*) from ${rows} group by reported, error_class
  union all select b.dimension || '.' || e.reported, b.value, ${sign} * count(*) from ${rows} as e join ${breakdown} as b on b.error_id = e.id group by b.dimension, e.reported, b.value`;

/**
 * PostgreSQL: the upsert of the signed counts of `counts` (dimension, value, n), in one order for every
 * statement, so that concurrent transactions lock count rows in one order and never wait for each
 * other in a circle: the errors' own rows (all, reported, class and its pairs) first, then the pairs
 * of hosts and components, then their own rows, each by (dimension, value). A transaction's
 * statements follow it too: a batch writes its errors, then their breakdown (pairs, then rows); a delete
 * the errors (their rows and pairs), then the breakdown (rows).
 */
const upsertOfRows = (counts: string, table = 'error_counts') => `insert into ${table} as kept (dimension, value, errors)
    select dimension, value, sum(n) from (${counts}) as counts (dimension, value, n) group by dimension, value having sum(n) <> 0
    order by case when dimension in ('host', 'component') then 2 when dimension like 'host.%' or dimension like 'component.%' then 1 else 0 end, dimension, value
    on conflict (dimension, value) do update set errors = kept.errors + excluded.errors`;

/**
 * Counts of pairs of filters in `error_counts` (docs/architecture.md#error-counts): how many errors of
 * each class are reported or not (`error_class.1`, `error_class.0`, value the class), and how many
 * of those seen on each host and component (`host.0`, `component.1`, ..., value the host or
 * component). The list's X-Total for `reported=` with one of those filters is one row read, not a
 * count that reads every error of the class, host or component (docs/benchmarks.md#error-list-queries-first-visits).
 *
 * The breakdown pairs count a join: each (error, breakdown row) with the error's state. Each trigger
 * adds what its change adds to the join as the other table stands: an error inserted or deleted, its
 * breakdown rows; a breakdown row inserted or deleted, its error if there; an error's state changed,
 * its breakdown rows moved. So the counts stay exact whichever of the two tables is written first (a
 * restore, a delete, a hand-written statement). The bulk delete of SQLite keeps them itself
 * (tracker/tracker-deletes.store.ts), as migration 026's counts.
 *
 * And on SQLite the triage's status index gains the assignee (below).
 */
export function errorPairCountsMigration(dialect: Dialect) {
  const triggers = dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
    async sqlite(db) {
      const run = (statement: string) => sql.raw(statement).execute(db);
      const remade: Array<[name: string, on: string, body: string]> = [
        ['infrastructure_errors_counts_insert', 'after insert on infrastructure_errors', upsertOfRow(errorRowCounts('new', 1))],
        ['infrastructure_errors_counts_delete', `after delete on infrastructure_errors ${UNLESS_BULK}`, upsertOfRow(errorRowCounts('old', -1))],
        // Only a change of state or class moves an error between rows; the upsert of a repeat sets neither.
        ['infrastructure_errors_counts_move', `after update of reported, error_class on infrastructure_errors
          when old.reported <> new.reported or old.error_class <> new.error_class`,
        `${upsertOfRow(errorRowCounts('old', -1, { all: false }))} ${upsertOfRow(errorRowCounts('new', 1, { all: false }))}`],
        ['error_breakdown_counts_insert', 'after insert on error_breakdown', upsertOfRow(breakdownRowCounts('new', 1))],
        ['error_breakdown_counts_delete', `after delete on error_breakdown ${UNLESS_BULK}`, upsertOfRow(breakdownRowCounts('old', -1))],
      ];
      for (const [name, on, body] of remade) {
        await run(`drop trigger ${name}`);
        await run(`create trigger ${name} ${on} begin ${body} end`);
      }
    },

    // The functions of migrations 007 and 026, each with the pairs its change adds or takes.
    async postgres(db) {
      const run = (statement: string) => sql.raw(statement).execute(db);
      const fn = (name: string, body: string) => run(`create or replace function ${name}() returns trigger language plpgsql as $$ begin ${body} return null; end $$`);
      const errorCounts = (rows: string, sign: 1 | -1) => `
        select 'all', '', ${sign} * count(*) from ${rows}
        union all select 'reported', reported::varchar, ${sign} * count(*) from ${rows} group by reported
        union all select 'error_class', error_class, ${sign} * count(*) from ${rows} group by error_class
        union all ${errorPairCounts(rows, sign)}`;
      await fn('error_counts_added', `${upsertOfRows(errorCounts('added', 1))};`);
      await fn('error_counts_removed', `${upsertOfRows(errorCounts('removed', -1))};`);
      const seen = (rows: string, sign: 1 | -1) => `
        select dimension, value, ${sign} * count(*) from ${rows} group by dimension, value
        union all select b.dimension || '.' || e.reported, b.value, ${sign} * count(*) from ${rows} as b join infrastructure_errors as e on e.id = b.error_id
          group by b.dimension, e.reported, b.value`;
      await fn('error_counts_seen', `${upsertOfRows(seen('added', 1))};`);
      await fn('error_counts_unseen', `${upsertOfRows(seen('removed', -1))};`);
      // A truncate of either table empties the join the pairs count.
      await fn('error_counts_truncated', `delete from error_counts where dimension like '%.%' or (TG_TABLE_NAME = 'error_breakdown') = (dimension in ('host', 'component'));`);
      // Every update of the errors runs it (migration 026): the breakdown is joined only for the errors
      // whose state changed. Those are found by adding up each error's rows before (-1) and after (+1),
      // not by joining the two transition tables: plpgsql keeps a statement's plan for the connection,
      // and one planned for a batch's few rows joined 33,000 to 33,000 by nested loops (a bulk update
      // of `reported` ran past 10 minutes); an aggregate stays linear whatever the plan.
      const moved = (schema: string) => upsertOfRows(`
        select 'reported', reported::varchar, -count(*) from updated_from group by reported
        union all select 'reported', reported::varchar, count(*) from updated_to group by reported
        union all select 'error_class', error_class, -count(*) from updated_from group by error_class
        union all select 'error_class', error_class, count(*) from updated_to group by error_class
        union all select 'error_class.' || reported, error_class, -count(*) from updated_from group by reported, error_class
        union all select 'error_class.' || reported, error_class, count(*) from updated_to group by reported, error_class
        union all select b.dimension || '.' || moved.reported, b.value, moved.n * count(*)
          from (
            select id, reported, sum(n) from (
              select id, reported, -1 from updated_from union all select id, reported, 1 from updated_to
            ) as sides (id, reported, n) group by id, reported having sum(n) <> 0
          ) as moved (id, reported, n)
          join ${schema}error_breakdown as b on b.error_id = moved.id
          group by b.dimension, moved.reported, b.value, moved.n`, `${schema}error_counts`);
      await fn('error_counts_updated', `
        if TG_TABLE_SCHEMA = current_schema() then
          ${moved('')};
        else
          execute format('${moved('<schema>.').replaceAll('%', '%%').replaceAll('<schema>.', '%1$I.').replaceAll("'", "''")}', TG_TABLE_SCHEMA);
        end if;`);
    },
  });

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Atomic, as migration 007: a row written between the triggers and the backfill is counted once.
      await dialect.migrations.atomically(db, async (trx) => {
        await triggers(trx);
        await sql`
          insert into error_counts (dimension, value, errors)
          select 'error_class.' || reported, error_class, count(*) from infrastructure_errors group by reported, error_class
          union all
          select b.dimension || '.' || e.reported, b.value, count(*) from error_breakdown as b join infrastructure_errors as e on e.id = b.error_id
            group by b.dimension, e.reported, b.value`.execute(trx);
      });
      // SQLite: the status index holds the assignee too, so a count of `status=` with `assignee=` is a
      // count of one range of it, not a read of each row of the status (as many entries as before,
      // each a column wider). Not on PostgreSQL: its plans probe `(triage_status, error_id)` by both
      // columns, and with the assignee between them it scanned the whole triage table instead
      // (docs/benchmarks.md#error-list-queries-first-visits).
      if (dialect.choose({ sqlite: true, postgres: false })) {
        await db.schema.dropIndex('error_triage_status').execute();
        await db.schema.createIndex('error_triage_status').on('error_triage').columns(['triage_status', 'assignee_id', 'error_id']).execute();
      }
    },
  };
}
