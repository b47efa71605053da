import { type Expression, type Kysely, sql, type SqlBool } from 'kysely';
import type { Database } from '../db/database.js';
import type { Dialect, PerDatabase } from '../db/dialects/dialect.js';
import { SQLITE_CACHE_KIB } from '../db/dialects/connection/sqlite.js';
import type { Schema } from '../db/schema.js';
import type { ErrorFilters } from './infrastructure-error.js';
import { filtered, idIn, trackerTransactions } from './tracker-sql.js';

/** At most this many errors are deleted by one statement per table (the ids one parameter of a few MB): the triggers of PostgreSQL and the text index of SQLite cost less in fewer, larger statements. */
const DELETED_PER_STATEMENT = 500_000;

/**
 * Deletes the errors `ids` (one part of at most DELETED_PER_STATEMENT) and everything kept about them
 * but their detail rows, keeping `error_counts`, the text index and the triage exact
 * (docs/architecture.md#error-counts).
 */
const deleteErrorRows: PerDatabase<(trx: Kysely<Schema>, ids: readonly number[], of: (column: string) => Expression<SqlBool>) => Promise<number>> = {
  // Statement triggers over the transition tables keep them, once a statement (migrations 007, 009, 023).
  async postgres(trx, ids, of) {
    const result = await trx.deleteFrom('infrastructure_errors').where(of('id')).executeTakeFirst();
    await trx.deleteFrom('error_breakdown').where(of('error_id')).execute();
    return Number(result.numDeletedRows);
  },
  // Row triggers would run five statements an error and two a breakdown row: while error_bulk_delete
  // holds a row (only in this transaction), they stand aside and one statement each does their work
  // for all the rows (migration 026).
  async sqlite(trx, ids, of) {
    // The statements below change every index of the errors at rows all over the file: with the
    // connection's page cache, pages went out and came back many times; for this transaction a
    // larger one (docs/benchmarks.md#bulk-changes-by-filter), given back after.
    await sql.raw(`pragma cache_size = ${BULK_CACHE_KIB}`).execute(trx);
    try {
      return await deleteSqliteRows(trx, of, ids.length >= TRIGGERS_DROPPED_FROM);
    } finally {
      await sql.raw(`pragma cache_size = ${SQLITE_CACHE_KIB}`).execute(trx);
    }
  },
};

/** SQLite's page cache while a bulk delete runs, in KiB as `cache_size` takes it. */
const BULK_CACHE_KIB = -262_144;
/**
 * From how many errors a SQLite delete drops the triggers that stand aside: a change of the schema
 * makes every connection of every process read it again, a cost only a delete of many rows repays.
 */
const TRIGGERS_DROPPED_FROM = 500;

async function deleteSqliteRows(trx: Kysely<Schema>, of: (column: string) => Expression<SqlBool>, dropTriggers: boolean): Promise<number> {
  await sql`insert into error_bulk_delete (held) values (1)`.execute(trx);
  // The triggers that stand aside still run, once per row, to find that they do (and with any
  // trigger on the table SQLite deletes in two passes): two thirds of the errors' delete. For many
  // rows they are dropped for this transaction and made again from their own text before it ends, so
  // no other connection ever sees them gone (docs/benchmarks.md#bulk-changes-by-filter).
  const { rows: standing } = dropTriggers ? await sql<{ name: string; sql: string }>`
    select name, sql from sqlite_master where type = 'trigger' and tbl_name in ('infrastructure_errors', 'error_breakdown', 'error_triage')
      and sql like '%error_bulk_delete%' order by rowid`.execute(trx) : { rows: [] };
  for (const { name } of standing) await sql`drop trigger ${sql.id(name)}`.execute(trx);
  // What the deleted rows add to each count, summed over their few distinct (class, reported) and
  // (dimension, value, reported): each table read once, not once per kind of count.
  await sql`
    with errors as (
      select reported, error_class, count(*) as n from infrastructure_errors where ${of('id')} group by reported, error_class
    ), details as (
      select b.dimension, b.value, e.reported, count(*) as n from error_breakdown as b join infrastructure_errors as e on e.id = b.error_id
        where ${of('b.error_id')} group by b.dimension, b.value, e.reported
    ), triage as (
      select triage_status, assignee_id, count(*) as n from error_triage where ${of('error_id')} group by triage_status, assignee_id
    )
    insert into error_counts (dimension, value, errors)
      select dimension, value, -sum(n) from (
        select 'all' as dimension, '' as value, n from errors
        union all select 'reported', cast(reported as varchar(255)), n from errors
        union all select 'error_class', error_class, n from errors
        union all select 'error_class.' || reported, error_class, n from errors
        union all select dimension, value, n from details
        union all select dimension || '.' || reported, value, n from details
        union all select 'triage.' || triage_status, coalesce(cast(assignee_id as varchar(255)), ''), n from triage
      ) as gone where true group by dimension, value
      on conflict (dimension, value) do update set errors = errors + excluded.errors`.execute(trx);
  await sql`delete from error_search where ${of('rowid')}`.execute(trx);
  await sql`delete from error_triage where ${of('error_id')}`.execute(trx);
  const result = await trx.deleteFrom('infrastructure_errors').where(of('id')).executeTakeFirst();
  await trx.deleteFrom('error_breakdown').where(of('error_id')).execute();
  for (const { sql: text } of standing) await sql.raw(text).execute(trx);
  await sql`delete from error_bulk_delete`.execute(trx);
  return Number(result.numDeletedRows);
}

/**
 * The test "is one of the errors `ids`" of a delete's statements. SQLite, for many errors: the ids
 * go once into a temporary table of this connection, whose key each statement searches; a JSON list
 * would be parsed and sorted into a table of its own again by each of the ten or so statements
 * (docs/architecture.md#error-counts).
 */
const deletedIds: PerDatabase<(trx: Kysely<Schema>, ids: readonly number[]) => Promise<(column: string) => Expression<SqlBool>>> = {
  postgres: (_trx, ids) => Promise.resolve((column: string) => idIn.postgres(column, ids)),
  async sqlite(trx, ids) {
    if (ids.length < TRIGGERS_DROPPED_FROM) return (column) => idIn.sqlite(column, ids);
    await sql`create temp table if not exists error_bulk_ids (id integer primary key)`.execute(trx);
    await sql`delete from temp.error_bulk_ids`.execute(trx);
    await sql`insert into temp.error_bulk_ids (id) select value from json_each(${JSON.stringify(ids)})`.execute(trx);
    return (column) => sql<SqlBool>`${sql.ref(column)} in (select id from temp.error_bulk_ids)`;
  },
};

/** Drops what `deletedIds` made for a delete of many errors. */
const deletedIdsDone: PerDatabase<(trx: Kysely<Schema>) => Promise<void>> = {
  postgres: async () => {},
  async sqlite(trx) {
    await sql`drop table if exists temp.error_bulk_ids`.execute(trx);
  },
};

/** Deletes errors by id with everything kept about them. */
async function deleteErrors(trx: Kysely<Schema>, dialect: Dialect, ids: number[]): Promise<number> {
  let deleted = 0;
  for (let at = 0; at < ids.length; at += DELETED_PER_STATEMENT) {
    const part = ids.slice(at, at + DELETED_PER_STATEMENT);
    const of = await dialect.choose(deletedIds)(trx, part);
    deleted += await dialect.choose(deleteErrorRows)(trx, part, of);
    for (const table of ['error_occurrences', 'error_histogram', 'error_alerts', 'error_notes', 'error_activity'] as const) {
      await trx.deleteFrom(table).where(of('error_id')).execute();
    }
  }
  if (ids.length >= TRIGGERS_DROPPED_FROM) await dialect.choose(deletedIdsDone)(trx);
  return deleted;
}

/** Deletes: one error, every error a filter selects, and retention's (docs/architecture.md#error-counts). */
export function trackerDeletesStore(database: Database) {
  const { dialect } = database;
  const trackerTransaction = trackerTransactions(database);

  return {
    /** Deletes one error and all that is kept about it; false when there was none. */
    async deleteById(id: number): Promise<boolean> {
      return trackerTransaction(async (trx) => (await deleteErrors(trx, dialect, [id])) === 1);
    },

    /** Deletes every error `filters` select (all of them when empty); answers how many. */
    async deleteMatching(filters: ErrorFilters): Promise<number> {
      return trackerTransaction(async (trx) => {
        const rows = await trx.selectFrom('infrastructure_errors').select('id').where((eb) => filtered(eb, filters, dialect)).execute();
        return deleteErrors(trx, dialect, rows.map((row) => Number(row.id)));
      });
    },

    /** Retention: errors not updated since `updatedBefore`, and hourly counts older than `hourBefore`. */
    async prune(updatedBefore: Date, hourBefore: number, eventsBefore?: Date): Promise<{ errors: number; buckets: number }> {
      return trackerTransaction(async (trx) => {
        const stale = await trx.selectFrom('infrastructure_errors').select('id').where('updated_at', '<', updatedBefore.toISOString()).execute();
        const errors = await deleteErrors(trx, dialect, stale.map((row) => Number(row.id)));
        const buckets = await trx.deleteFrom('error_histogram').where('hour', '<', hourBefore).executeTakeFirst();
        if (eventsBefore !== undefined) await trx.deleteFrom('ingested_events').where('occurred_at', '<', eventsBefore.toISOString()).execute();
        return { errors, buckets: Number(buckets.numDeletedRows) };
      });
    },
  };
}
