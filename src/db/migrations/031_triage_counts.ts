import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** SQLite: the WHEN of a delete trigger that stands aside while a bulk delete keeps the counts itself (migration 026). */
const UNLESS_BULK = 'when not exists (select 1 from error_bulk_delete)';

/** SQLite: the upsert of one triage row's count: `row` ('new' or 'old') added (`sign` 1) or taken (-1). */
const upsertOfRow = (row: 'new' | 'old', sign: 1 | -1) => `insert into error_counts (dimension, value, errors)
  values ('triage.' || ${row}.triage_status, coalesce(cast(${row}.assignee_id as varchar(255)), ''), ${sign})
  on conflict (dimension, value) do update set errors = errors + excluded.errors;`;

/** PostgreSQL: the signed counts (dimension, value, n) of the triage rows of transition table `rows`. */
const countsOf = (rows: string, sign: 1 | -1) =>
  `select 'triage.' || triage_status, coalesce(assignee_id::varchar, ''), ${sign} * count(*) from ${rows} group by triage_status, assignee_id`;

/** PostgreSQL: the upsert of the signed counts of `counts` into `table`, in (dimension, value) order (concurrent statements lock rows in one order). */
const upsertOfRows = (counts: string, table: string) => `insert into ${table} as kept (dimension, value, errors)
    select dimension, value, sum(n) from (${counts}) as counts (dimension, value, n) group by dimension, value having sum(n) <> 0
    order by dimension, value
    on conflict (dimension, value) do update set errors = kept.errors + excluded.errors`;

/**
 * Counts of the triage in `error_counts` (docs/architecture.md#error-counts): how many errors have each
 * status and assignee, dimension `triage.<status>`, value the assignee's id ('' for none). The list's
 * X-Total for `status=`, `assignee=` or both is one row read, or the few rows of one status or one
 * assignee added up, not a count of the status's or assignee's range of the triage index (200,000 to
 * 800,000 entries of 1,000,000 errors: docs/benchmarks.md#error-list-queries-first-visits).
 *
 * Triggers on `error_triage` keep them, as those of migrations 007, 026 and 028 keep the others: per
 * row on SQLite (a bulk delete keeps them itself, tracker/tracker-deletes.store.ts), per statement with the
 * transition tables on PostgreSQL. A truncate of the errors leaves them (the triage rows stay); one of
 * the triage takes them away.
 */
export function triageCountsMigration(dialect: Dialect) {
  const triggers = dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
    async sqlite(db) {
      const run = (statement: string) => sql.raw(statement).execute(db);
      await run(`create trigger error_triage_counts_insert after insert on error_triage begin ${upsertOfRow('new', 1)} end`);
      await run(`create trigger error_triage_counts_delete after delete on error_triage ${UNLESS_BULK} begin ${upsertOfRow('old', -1)} end`);
      // Only a change of status or assignee moves a row between counts (the snooze and dates move none).
      await run(`create trigger error_triage_counts_move after update of triage_status, assignee_id on error_triage
        when old.triage_status <> new.triage_status or old.assignee_id is not new.assignee_id
        begin ${upsertOfRow('old', -1)} ${upsertOfRow('new', 1)} end`);
    },

    async postgres(db) {
      const run = (statement: string) => sql.raw(statement).execute(db);
      // The counts beside the triage whatever the writer's search_path (as migration 026's): cmi's own
      // statements, in the table's schema, run the statement as planned once.
      const fn = (name: string, counts: string) => {
        const upsert = (table: string) => upsertOfRows(counts, table);
        return run(`create or replace function ${name}() returns trigger language plpgsql as $$ begin
          if TG_TABLE_SCHEMA = current_schema() then
            ${upsert('error_counts')};
          else
            execute format('${upsert('<schema>.error_counts').replaceAll('%', '%%').replaceAll('<schema>.', '%1$I.').replaceAll("'", "''")}', TG_TABLE_SCHEMA);
          end if;
          return null; end $$`);
      };
      await fn('error_triage_counts_added', countsOf('added', 1));
      await fn('error_triage_counts_removed', countsOf('removed', -1));
      // Every update of the triage (a snooze's counter, a regression) runs it; the rows whose status
      // and assignee stayed add up to nothing and write no count.
      await fn('error_triage_counts_updated', `${countsOf('updated_from', -1)} union all ${countsOf('updated_to', 1)}`);
      await run(`create or replace function error_triage_counts_truncated() returns trigger language plpgsql as $$ begin
          delete from error_counts where dimension like 'triage.%'; return null; end $$`);
      await run(`create trigger error_triage_counts_insert after insert on error_triage
        referencing new table as added for each statement execute function error_triage_counts_added()`);
      await run(`create trigger error_triage_counts_delete after delete on error_triage
        referencing old table as removed for each statement execute function error_triage_counts_removed()`);
      await run(`create trigger error_triage_counts_update after update on error_triage
        referencing old table as updated_from new table as updated_to for each statement execute function error_triage_counts_updated()`);
      await run('create trigger error_triage_counts_truncate after truncate on error_triage for each statement execute function error_triage_counts_truncated()');
      // Migration 028's truncate of the errors takes every count but the breakdown's: not the triage's now.
      await run(`create or replace function error_counts_truncated() returns trigger language plpgsql as $$ begin
          delete from error_counts where dimension not like 'triage.%'
            and (dimension like '%.%' or (TG_TABLE_NAME = 'error_breakdown') = (dimension in ('host', 'component')));
          return null; end $$`);
    },
  });

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Atomic, as migration 007: a row written between the triggers and the backfill is counted once.
      await dialect.migrations.atomically(db, async (trx) => {
        // `triage.unresolved` is longer than migration 007's 16 characters (PostgreSQL: a change of the
        // catalog only, no row or index rewritten; SQLite does not hold text to a length).
        if (dialect.choose({ sqlite: false, postgres: true })) await sql`alter table error_counts alter column dimension type varchar(32)`.execute(trx);
        await triggers(trx);
        await sql`
          insert into error_counts (dimension, value, errors)
          select 'triage.' || triage_status, coalesce(cast(assignee_id as varchar(255)), ''), count(*) from error_triage group by triage_status, assignee_id`.execute(trx);
      });
    },
  };
}
