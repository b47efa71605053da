import { CompiledQuery, type Expression, type ExpressionBuilder, type Kysely, type RawBuilder, type Selectable, type SelectQueryBuilder, sql, type SqlBool, type Transaction } from 'kysely';
import type { InfrastructureError } from './infrastructure-error.js';
import type { Database } from '../db/database.js';
import { retryingConflicts } from '../db/conflicts.js';
import type { Dialect, PerDatabase } from '../db/dialects/dialect.js';
import { likeContaining } from '../db/dialects/text/text.js';
import { SQLITE_CACHE_KIB } from '../db/dialects/connection/sqlite.js';
import type { ErrorCountDimension, InfrastructureErrorsTable, Schema } from '../db/schema.js';
import { type BatchTriage, triageInBatch } from './triage-batch.js';
import { TRIAGE_STATUSES, type TriageStatus } from './triage.js';

/** One report of an error, validated and truncated, as the tracker stores it. */
export interface ErrorReport {
  fingerprint: string;
  error_class: string;
  message: string;
  backtrace: string;
  occurred_at: Date;
  /** Occurrences it stands for (1 unless the reporter pre-aggregated). */
  count: number;
  host: string | null;
  component: string | null;
  request_id: string | null;
  /** A JSON object, serialized. */
  context: string | null;
  /**
   * What makes the report idempotent, when given (a Sentry event: its key's id and event id,
   * ingest/sentry-ingestion.ts): a report whose key was counted before, in an error that is still
   * there, is counted no more. Kept in `ingested_events` for a day after the occurrence (migration 022).
   */
  event_key?: string;
}

/** Which occurrences each error keeps: the first `first` and the latest `latest`. */
export interface SampleSize {
  first: number;
  latest: number;
}

export interface ErrorFilters {
  reported?: boolean;
  errorClass?: string;
  /** Case-insensitive substring of the class or the message. */
  q?: string;
  since?: Date;
  until?: Date;
  host?: string;
  component?: string;
  /** The triage status (docs/api.md#error-triage). */
  status?: TriageStatus;
  /** The assignee's id, or 'none' for errors assigned to no one. */
  assignee?: number | 'none';
}

export type ErrorSort = 'updated_at' | 'created_at' | 'counter';
export type Direction = 'asc' | 'desc';

export interface StoredOccurrence {
  id: number;
  occurred_at: Date;
  host: string | null;
  component: string | null;
  request_id: string | null;
  message: string;
  context: string | null;
}

export type BreakdownDimension = 'host' | 'component';

/**
 * A page is read either by walking the list's order and testing each error, which takes about
 * `all / matches` errors per row wanted, or by reading the matches' ids from the index of their
 * filter and sorting them, about one row a match, each a third of a walked row's cost. Whichever
 * reads less: the matches first when `matches² <= WALKED_ROW_COST * wanted * all`.
 */
const WALKED_ROW_COST = 3;

/** searchKeyOf counts each word's matches up to this many. */
const SEARCH_PROBE = 1_000;

/** A count driven by a host's or component's errors tests the other filters on each when they are at most this many. */
const PROBED_ROWS = 50_000;

/** At most this many rows go into one multi-row statement (well under both databases' parameter limits). */
const ROWS_PER_STATEMENT = 500;

function toRecord(row: Selectable<InfrastructureErrorsTable>): InfrastructureError {
  return {
    id: Number(row.id),
    backtrace: row.backtrace,
    counter: Number(row.counter),
    created_at: new Date(row.created_at),
    error_class: row.error_class,
    fingerprint: row.fingerprint,
    message: row.message,
    reported: Number(row.reported) === 1,
    updated_at: new Date(row.updated_at),
  };
}

const HOUR_MS = 3_600_000;
export const hourOf = (at: Date): number => Math.floor(at.getTime() / HOUR_MS);

const containsPattern = (text: string) => likeContaining(text.toLowerCase());

/**
 * A query of the ids of the errors whose folded class or message (`dialect.text.lowerFunction`) holds
 * `folded` (already lower-cased), answered from the text index of migrations 008 and 009, for
 * `id in (...)`. Undefined where the caller should compare each error's own folded text instead: where
 * the index cannot answer this text, or when `few` is false (many matches, so the list is walked in
 * order) and the database's planner would read every match rather than walk (docs/architecture.md#the-page).
 */
const errorIdsContaining: PerDatabase<(folded: string, few: boolean) => RawBuilder<{ id: number }> | undefined> = {
  // A trigram index answers texts of 3 characters or more, as a phrase: the trigrams in a row.
  // SQLite's planner cannot tell how many that is, so many matches are left to the walk.
  sqlite: (folded, few) =>
    (!few || [...folded].length < 3 ? undefined : sql<{ id: number }>`select rowid as id from error_search where error_search match ${`"${folded.replaceAll('"', '""')}"`}`),

  // Any text, few matches or many: error_search's statistics tell the planner how many match, and
  // it walks the list or reads the matches as they say. (Trigrams find a text of 3 characters or
  // more; a shorter one reads the narrow table whole, still less than the errors.)
  postgres: (folded) => {
    const pattern = likeContaining(folded);
    return sql<{ id: number }>`select id from error_search where error_class like ${pattern} escape '\\' or message like ${pattern} escape '\\'`;
  },
};

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += ROWS_PER_STATEMENT) out.push(items.slice(i, i + ROWS_PER_STATEMENT));
  return out;
}

/**
 * The write path's statements, as text (building them with kysely cost more than running them:
 * docs/benchmarks.md#error-tracker): a multi-row insert of `rows` rows of `width` placeholders, the
 * first numbered `from` + 1 (PostgreSQL's `$n`; SQLite's `?` are in order).
 */
const placeholderRows: PerDatabase<(rows: number, width: number, from: number) => string> = {
  sqlite: (rows, width) => {
    const row = `(${new Array<string>(width).fill('?').join(', ')})`;
    return new Array<string>(rows).fill(row).join(', ');
  },
  postgres: (rows, width, from) => {
    const out: string[] = [];
    for (let r = 0, n = from; r < rows; r++) {
      const row: string[] = [];
      for (let c = 0; c < width; c++) row.push(`$${++n}`);
      out.push(`(${row.join(', ')})`);
    }
    return out.join(', ');
  },
};

/** The latest occurrence's text wins (by when it happened); the earliest `created_at`, the latest `updated_at` (docs/error-grouping.md). */
const ERRORS_UPSERT = {
  head: 'insert into infrastructure_errors (fingerprint, error_class, message, backtrace, counter, reported, created_at, updated_at) values ',
  width: 8,
  tail: ` on conflict (fingerprint) do update set
    counter = infrastructure_errors.counter + excluded.counter,
    message = case when excluded.updated_at >= infrastructure_errors.updated_at then excluded.message else infrastructure_errors.message end,
    backtrace = case when excluded.updated_at >= infrastructure_errors.updated_at then excluded.backtrace else infrastructure_errors.backtrace end,
    created_at = case when excluded.created_at < infrastructure_errors.created_at then excluded.created_at else infrastructure_errors.created_at end,
    updated_at = case when excluded.updated_at > infrastructure_errors.updated_at then excluded.updated_at else infrastructure_errors.updated_at end
    returning *`,
};
const HISTOGRAM_UPSERT = {
  head: 'insert into error_histogram (error_id, hour, count) values ',
  width: 3,
  tail: ' on conflict (error_id, hour) do update set count = error_histogram.count + excluded.count',
};
const BREAKDOWN_UPSERT = {
  head: 'insert into error_breakdown (error_id, dimension, value, count, last_seen_at) values ',
  width: 5,
  tail: ` on conflict (error_id, dimension, value) do update set count = error_breakdown.count + excluded.count,
    last_seen_at = case when excluded.last_seen_at > error_breakdown.last_seen_at then excluded.last_seen_at else error_breakdown.last_seen_at end`,
};
const OCCURRENCES_INSERT = {
  head: 'insert into error_occurrences (error_id, ordinal, occurred_at, count, host, component, request_id, message, context) values ',
  width: 9,
  tail: '',
};
/** The activity's `first_seen` rows of the errors a batch created (tracker/triage.store.ts reads them). */
const FIRST_SEEN_INSERT = {
  head: 'insert into error_activity (error_id, at, actor_id, action, details) values ',
  width: 5,
  tail: '',
};
type RowStatement = typeof HISTOGRAM_UPSERT;

/** One multi-row statement of `statement` over `rows` (each `statement.width` values), its placeholders numbered from `from` + 1. */
const rowsText = (placeholders: (rows: number, width: number, from: number) => string, statement: RowStatement, rows: number, from = 0) =>
  `${statement.head}${placeholders(rows, statement.width, from)}${statement.tail}`;

/** What a batch writes beside its errors' rows: flat parameter lists of `width` values a row. */
interface BatchRows {
  hours: unknown[];
  breakdown: unknown[];
  occurrences: unknown[];
  /** The `first_seen` activity of the errors the batch created, by id. */
  firstSeen: unknown[];
  /** [error id, ordinal up to] of each error whose sample sheds the occurrences between its first and its latest. */
  trims: Array<[number, number]>;
}

/** The triage rows of errors triaged away from `unresolved` (tracker/triage-batch.ts reads them). */
type TriagedRow = Pick<Selectable<Schema['error_triage']>, 'error_id' | 'triage_status' | 'snoozed_until' | 'snooze_until_counter'>;

/** A flat parameter list, `width` values a row, in parts of at most ROWS_PER_STATEMENT rows. */
function rowParts(values: readonly unknown[], width: number): unknown[][] {
  const step = ROWS_PER_STATEMENT * width;
  const out: unknown[][] = [];
  for (let i = 0; i < values.length; i += step) out.push(values.slice(i, i + step));
  return out;
}

/**
 * Writes a batch's hourly counts, breakdown, kept occurrences, first sightings and the sample's trims; on PostgreSQL
 * also reads the triage of `ids` (those not `unresolved`: tracker/triage-batch.ts). SQLite: one statement each, prepared once (an in-process
 * call costs microseconds). PostgreSQL: every round trip costs more than the statements, so all of it
 * goes in one statement, each write a data-modifying WITH of its own; the trims delete no occurrence
 * this batch inserts (those are left out before: `recordBatch`), so what they cannot see changes nothing.
 */
const writeBatchRows: PerDatabase<(trx: Kysely<Schema>, rows: BatchRows, first: number, ids: readonly number[]) => Promise<TriagedRow[] | undefined>> = {
  async sqlite(trx, rows, first) {
    const run = (text: string, parameters: readonly unknown[]) => trx.executeQuery(CompiledQuery.raw(text, [...parameters]));
    for (const [statement, values] of [[HISTOGRAM_UPSERT, rows.hours], [BREAKDOWN_UPSERT, rows.breakdown], [OCCURRENCES_INSERT, rows.occurrences], [FIRST_SEEN_INSERT, rows.firstSeen]] as const) {
      for (const part of rowParts(values, statement.width)) await run(rowsText(placeholderRows.sqlite, statement, part.length / statement.width), part);
    }
    for (const [errorId, upTo] of rows.trims) await run('delete from error_occurrences where error_id = ? and ordinal > ? and ordinal <= ?', [errorId, first, upTo]);
    // The triage is read by tracker/triage-batch.ts.
    return undefined;
  },
  async postgres(trx, rows, first, ids) {
    const withs: string[] = [];
    const parameters: unknown[] = [];
    const flush = async (final: boolean): Promise<TriagedRow[]> => {
      const select = final
        ? `select error_id, triage_status, snoozed_until, snooze_until_counter from error_triage where error_id = any($${parameters.length + 1}::integer[]) and triage_status <> 'unresolved'`
        : 'select 1 as error_id';
      if (final) parameters.push(`{${ids.join(',')}}`);
      const text = withs.length === 0 ? select : `with ${withs.join(', ')} ${select}`;
      const { rows: answered } = await trx.executeQuery<TriagedRow>(CompiledQuery.raw(text, parameters.splice(0)));
      withs.length = 0;
      return final ? answered : [];
    };
    // One statement unless a batch is larger than ROWS_PER_STATEMENT rows of one table: a table is written once a statement.
    const parts = (statement: RowStatement, values: readonly unknown[]) => rowParts(values, statement.width).map((part) => ({ statement, part }));
    const writes = [...parts(HISTOGRAM_UPSERT, rows.hours), ...parts(BREAKDOWN_UPSERT, rows.breakdown), ...parts(OCCURRENCES_INSERT, rows.occurrences), ...parts(FIRST_SEEN_INSERT, rows.firstSeen)];
    const written = new Set<RowStatement>();
    for (const { statement, part } of writes) {
      if (written.has(statement)) {
        await flush(false);
        written.clear();
      }
      written.add(statement);
      withs.push(`w${withs.length} as (${rowsText(placeholderRows.postgres, statement, part.length / statement.width, parameters.length)})`);
      parameters.push(...part);
    }
    if (rows.trims.length > 0) {
      const from = parameters.length;
      const pairs = rows.trims.map((_, k) => `($${from + 2 * k + 2}::integer, $${from + 2 * k + 3}::bigint)`).join(', ');
      parameters.push(first, ...rows.trims.flat());
      withs.push(`w${withs.length} as (delete from error_occurrences as o using (values ${pairs}) as t (error_id, up_to)
        where o.error_id = t.error_id and o.ordinal > $${from + 1} and o.ordinal <= t.up_to)`);
    }
    return flush(true);
  },
};


/** The reports of one error within a batch, in arrival order. */
interface Group {
  fingerprint: string;
  reports: ErrorReport[];
  count: number;
  firstAt: string;
  lastAt: string;
}

function groupByFingerprint(reports: readonly ErrorReport[]): Group[] {
  const groups = new Map<string, Group>();
  for (const report of reports) {
    const at = report.occurred_at.toISOString();
    const group = groups.get(report.fingerprint);
    if (!group) {
      groups.set(report.fingerprint, { fingerprint: report.fingerprint, reports: [report], count: report.count, firstAt: at, lastAt: at });
      continue;
    }
    group.reports.push(report);
    group.count += report.count;
    if (at < group.firstAt) group.firstAt = at;
    if (at > group.lastAt) group.lastAt = at;
  }
  // One order for every writer, so two transactions lock the same records in the same order (PostgreSQL).
  return [...groups.values()].sort((a, b) => (a.fingerprint < b.fingerprint ? -1 : 1));
}

/** The ids of the errors whose triage the filters `status` and `assignee` select. */
function triagedAs(eb: ExpressionBuilder<Schema, 'infrastructure_errors'>, filters: ErrorFilters) {
  let triaged = eb.selectFrom('error_triage').select('error_triage.error_id');
  if (filters.status !== undefined) triaged = triaged.where('error_triage.triage_status', '=', filters.status);
  if (filters.assignee === 'none') triaged = triaged.where('error_triage.assignee_id', 'is', null);
  else if (filters.assignee !== undefined) triaged = triaged.where('error_triage.assignee_id', '=', filters.assignee);
  return triaged;
}

/** Whether the only filters are the triage's (`status`, `assignee`). */
export const onlyTriageFilters = (filters: ErrorFilters): boolean =>
  (filters.status !== undefined || filters.assignee !== undefined)
  && Object.entries(filters).every(([name, value]) => name === 'status' || name === 'assignee' || value === undefined);

/**
 * Which filters a list reads from their own index (`id in (...)`), the others tested on each error of
 * the walk or the driving filter's rows: `true` all of them, `false` none, or those named.
 */
export type ReadFromIndex = boolean | ReadonlySet<'status' | 'q' | 'host' | 'component' | 'errorClass'>;

/**
 * `searchKey`: the part of `q` (folded) that the text index is asked for, when the store chose one
 * (searchKeyOf); each error the index gives is then tested for the whole of `q`.
 */
export function filtered(eb: ExpressionBuilder<Schema, 'infrastructure_errors'>, filters: ErrorFilters, dialect: Dialect, fromIndex: ReadFromIndex = true, searchKey?: string) {
  const reads = (name: 'status' | 'q' | 'host' | 'component' | 'errorClass') => (typeof fromIndex === 'boolean' ? fromIndex : fromIndex.has(name));
  // Tested on each error of the walk, as chosen. PostgreSQL would otherwise join the `exists` as a
  // semi-join and, by statistics that lag an incident's new errors (a host it never saw estimated at
  // one error), read all of the value's errors and sort them, a cost growing with the incident.
  // `offset 0` keeps the subquery a test per row (docs/architecture.md#the-page).
  const perError = dialect.choose({ sqlite: false, postgres: true });
  const eachError = <Q extends { offset(offset: number): Q }>(subquery: Q): Q => (perError ? subquery.offset(0) : subquery);
  const conditions = [];
  if (filters.status !== undefined || filters.assignee !== undefined) {
    // Every error has one triage row (migration 023). Few match: read their ids from the status or
    // assignee index (`id in`). Many: test the errors in the list's order, each by its triage row.
    const triaged = triagedAs(eb, filters);
    conditions.push(reads('status') ? eb('id', 'in', triaged) : eb.exists(eachError(triaged.whereRef('error_triage.error_id', '=', 'infrastructure_errors.id'))));
  }
  if (filters.reported !== undefined) conditions.push(eb('reported', '=', filters.reported ? 1 : 0));
  if (filters.errorClass !== undefined) {
    // Named apart from the others (a list's choice, ReadFromIndex), the class is tested on each error
    // of the walk: SQLite, with no statistics, would otherwise read all of the class's errors from
    // its index and sort them (`+` keeps a column's index out of SQLite's plan; PostgreSQL chooses by its statistics).
    const walked = typeof fromIndex !== 'boolean' && !fromIndex.has('errorClass') && dialect.choose({ sqlite: true, postgres: false });
    conditions.push(walked ? sql<SqlBool>`+error_class = ${filters.errorClass}` : eb('error_class', '=', filters.errorClass));
  }
  if (filters.since !== undefined) conditions.push(eb('updated_at', '>=', filters.since.toISOString()));
  if (filters.until !== undefined) conditions.push(eb('updated_at', '<=', filters.until.toISOString()));
  if (filters.q !== undefined) {
    // The ids of the matches from the text index, when few match or the database's planner can tell
    // how many do. Otherwise test the errors in the list's order and stop at the page's end.
    const folded = filters.q.toLowerCase();
    const key = searchKey ?? folded;
    const indexed = dialect.choose(errorIdsContaining)(key, reads('q'));
    const lower = sql.raw(dialect.text.lowerFunction);
    const pattern = containsPattern(filters.q);
    const tested = eb.or([
      sql<boolean>`${lower}(error_class) like ${pattern} escape '\\'`,
      sql<boolean>`${lower}(message) like ${pattern} escape '\\'`,
    ]);
    const found = indexed && sql<boolean>`${sql.ref('infrastructure_errors.id')} in (${indexed})`;
    conditions.push(!found ? tested : key === folded ? found : eb.and([found, tested]));
  }
  for (const dimension of ['host', 'component'] as const) {
    const value = filters[dimension];
    if (value === undefined) continue;
    const seen = eb.selectFrom('error_breakdown').select('error_breakdown.error_id')
      .where('error_breakdown.dimension', '=', dimension)
      .where('error_breakdown.value', '=', value);
    // Few errors seen there: read them from the (dimension, value, error_id) index (`id in`). Many:
    // test the errors in the list's order, each by its breakdown key, and stop at the page's end.
    conditions.push(reads(dimension) ? eb('id', 'in', seen) : eb.exists(eachError(seen.whereRef('error_breakdown.error_id', '=', 'infrastructure_errors.id'))));
  }
  return eb.and(conditions);
}

/**
 * The `error_counts` row that holds how many errors `filters` select, when one does: none or one
 * equality filter (migration 007), or `reported` and one of class, host and component (migration 028).
 */
function countedBy(filters: ErrorFilters): { dimension: ErrorCountDimension; value: string } | undefined {
  const given = Object.entries(filters).filter(([, value]) => value !== undefined);
  if (given.length === 0) return { dimension: 'all', value: '' };
  const reported = filters.reported === undefined ? undefined : filters.reported ? '1' : '0';
  if (given.length > (reported === undefined ? 1 : 2)) return undefined;
  const paired = (dimension: 'error_class' | 'host' | 'component', value: string) =>
    ({ dimension: reported === undefined ? dimension : `${dimension}.${reported}` as const, value });
  if (filters.errorClass !== undefined) return paired('error_class', filters.errorClass);
  if (filters.host !== undefined) return paired('host', filters.host);
  if (filters.component !== undefined) return paired('component', filters.component);
  if (reported !== undefined && given.length === 1) return { dimension: 'reported', value: reported };
  return undefined;
}

/** One error's part of a committed batch: the record as the batch left it, whether it created it, how many it added. */
export interface BatchOutcome {
  record: InfrastructureError;
  created: boolean;
  added: number;
  /** Its triage once the batch is committed, and whether the batch reopened it (tracker/triage-batch.ts). */
  triage: BatchTriage;
  /** The hosts and components the batch's reports of it name (alert rules match them: docs/alert-routing.md). */
  hosts: readonly string[];
  components: readonly string[];
}

/**
 * What a feature above the tracker does inside the transaction that counts a batch (the alerts queue
 * what it causes, so an alert exists exactly when its cause was committed: alerts/planner.ts). The
 * tracker knows it only as this port, wired at the top (app/app.ts).
 */
export type InBatch = (trx: Kysely<Schema>, outcomes: readonly BatchOutcome[]) => Promise<unknown>;

/** `column` is one of `ids`, given as one parameter, so 100 000 ids are one statement on either database. */
export const idIn: PerDatabase<(column: string, ids: readonly number[]) => Expression<SqlBool>> = {
  sqlite: (column, ids) => sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(ids)}))`,
  // An array the planner knows the length of: a hashed `= any` over a scan, or index probes for a few.
  postgres: (column, ids) => sql<SqlBool>`${sql.ref(column)} = any(${`{${ids.join(',')}}`}::integer[])`,
};

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

/**
 * The filters tested on an error's own row (not its sort index's entry, its breakdown or its triage;
 * the class has an index of its own, `(error_class, updated_at, id)`, which the walk keeps).
 */
const ROW_FILTERS = ['reported', 'q'] as const;

/**
 * `walkBound`: a walk reads at most about this many errors of the list's order, those whose sort value
 * is at least (descending; at most, ascending) that of the error this many into the order (read from
 * the sort's index by the same statement; on PostgreSQL the walk's own limit instead, readPage): a
 * prefix of the order, so a full page from it is the page.
 * `'never'`: the matches are read from the indexes and sorted, never the order walked (PostgreSQL's
 * planner, taking them as spread evenly, would otherwise walk it after the bounded walk found too few).
 */
type PageReader = (db: Kysely<Schema>, filters: ErrorFilters, dialect: Dialect, fromIndex: ReadFromIndex, searchKey: string | undefined,
  sort: ErrorSort, direction: Direction, limit: number, offset: number, walkBound?: number | 'never') => Promise<Array<Selectable<InfrastructureErrorsTable>>>;

/** The walk's bound (PageReader's `walkBound`) as a condition on the walked errors. */
function withinWalk(eb: ExpressionBuilder<Schema, 'infrastructure_errors'>, sort: ErrorSort, direction: Direction, walkBound: number | 'never' | undefined) {
  if (typeof walkBound !== 'number') return eb.and([]);
  const order = sql.raw(direction === 'desc' ? 'desc' : 'asc');
  const last = sql`(select ${sql.ref(`bounded.${sort}`)} from infrastructure_errors as bounded order by ${sql.ref(`bounded.${sort}`)} ${order}, ${sql.ref('bounded.id')} ${order} limit 1 offset ${walkBound})`;
  return sql<SqlBool>`${sql.ref(`infrastructure_errors.${sort}`)} ${sql.raw(direction === 'desc' ? '>=' : '<=')} ${last}`;
}

const plainPage: PageReader = (db, filters, dialect, fromIndex, searchKey, sort, direction, limit, offset, walkBound) => db.selectFrom('infrastructure_errors').selectAll()
  .where((eb) => eb.and([filtered(eb, filters, dialect, fromIndex, searchKey), withinWalk(eb, sort, direction, walkBound)]))
  .orderBy(sort, direction).orderBy('id', direction)
  .limit(limit).offset(offset)
  .execute();

/**
 * One page of the list, in `sort` order (ties by id the same way). SQLite reads an index's entry and
 * seeks the error's row only for a column the entry lacks. PostgreSQL's walk of an index fetches
 * each error's row before its breakdown or triage is tested, so a walk past 10,000 errors of
 * another component read 10,000 rows for 25 (docs/benchmarks.md#error-list-queries-first-visits): it
 * walks the index's entries alone (`(updated_at, id)`, `(counter, id)`, ...) for the page's ids, the
 * row filters tested by key only on the errors the others let through, then reads those 25 rows.
 */
const readPage: PerDatabase<PageReader> = {
  sqlite: plainPage,
  postgres(db, filters, dialect, fromIndex, searchKey, sort, direction, limit, offset, walkBound) {
    // Only a walk: where any filter's matches are read from their index (few match), the planner,
    // shown an index-only walk, walked 50,000 entries for a host's 2,000 errors instead of sorting those.
    const reads = (name: 'status' | 'host' | 'component') => (typeof fromIndex === 'boolean' ? fromIndex : fromIndex.has(name));
    const given = (['host', 'component', 'status'] as const).filter((name) => (name === 'status' ? filters.status !== undefined || filters.assignee !== undefined : filters[name] !== undefined));
    const walked = given.length > 0 && given.every((name) => !reads(name));
    if (walkBound === 'never') {
      // An order no index gives (the same values: `|| ''` on text, `+ 0` on the counter).
      const unindexed = sql`${sql.ref(`infrastructure_errors.${sort}`)} ${sql.raw(sort === 'counter' ? '+ 0' : "|| ''")}`;
      return db.selectFrom('infrastructure_errors').selectAll()
        .where((eb) => filtered(eb, filters, dialect, fromIndex, searchKey))
        .orderBy(unindexed, direction).orderBy('id', direction)
        .limit(limit).offset(offset)
        .execute();
    }
    if (!walked) return plainPage(db, filters, dialect, fromIndex, searchKey, sort, direction, limit, offset, walkBound);
    const byRow: ErrorFilters = {};
    const rest: ErrorFilters = { ...filters };
    for (const name of ROW_FILTERS) {
      if (filters[name] === undefined) continue;
      (byRow as Record<string, unknown>)[name] = filters[name];
      delete rest[name];
    }
    // The bound as the walk's own limit: the first `walkBound` entries of the order, read only as far as
    // the page needs them (a limit is pulled row by row). The value `walkBound` entries in (withinWalk)
    // costs all of them first (docs/architecture.md#the-page).
    const columns = new Set(['id', sort, ...(filters.since !== undefined || filters.until !== undefined ? ['updated_at'] : []), ...(filters.errorClass !== undefined ? ['error_class'] : [])]);
    const order = db.selectFrom('infrastructure_errors').select([...columns] as Array<keyof InfrastructureErrorsTable>)
      .orderBy(sort, direction).orderBy('id', direction);
    const walk = (typeof walkBound === 'number' ? order.limit(walkBound) : order).as('infrastructure_errors');
    const ids = (db.selectFrom(walk) as unknown as SelectQueryBuilder<Schema, 'infrastructure_errors', object>).select('infrastructure_errors.id')
      .where((eb) => {
        const others = filtered(eb, rest, dialect, fromIndex, searchKey);
        if (Object.keys(byRow).length === 0) return others;
        // Each error's own row by key, the same table's row as the walk's entry.
        const own = eb.selectFrom('infrastructure_errors as own').select('own.id').whereRef('own.id', '=', 'infrastructure_errors.id')
          .where((inner) => filtered(inner as unknown as ExpressionBuilder<Schema, 'infrastructure_errors'>, byRow, dialect, fromIndex, searchKey));
        return eb.and([others, eb.exists(own)]);
      })
      .orderBy(sort, direction).orderBy('infrastructure_errors.id', direction)
      .limit(limit).offset(offset);
    return db.selectFrom('infrastructure_errors').selectAll().where('id', 'in', ids)
      .orderBy(sort, direction).orderBy('id', direction)
      .execute();
  },
};

/**
 * Transactions writing the tracker: each run again when PostgreSQL rolls it back for a deadlock with
 * another (db/conflicts.ts), and its end moves the tracker's version (Database.transactionEnded), so
 * cached pages of the list go at once (docs/architecture.md#how-cached-pages-stay-right).
 */
export const trackerTransactions = (database: Database) => <T>(work: (trx: Transaction<Schema>) => Promise<T>): Promise<T> =>
  retryingConflicts(() => database.db.transaction().execute(work)).finally(() => database.transactionEnded('tracker'));

export function infrastructureErrorsRepository(database: Database) {
  const { db, dialect } = database;
  const trackerTransaction = trackerTransactions(database);
  // The one statement a record's page runs, compiled once (building and compiling it cost more than running it).
  const findByIdSql = db.selectFrom('infrastructure_errors').selectAll().where('id', '=', 0).compile().sql;

  /**
   * How many errors match. With no filter or one equality filter, read from `error_counts` (migration
   * 007). With a host or component filter and others, counted from that value's breakdown rows (at most
   * one per error, so the count is exact) joined to their errors: the rows read are the errors seen
   * there, not every error.
   */
  const countMatching = async (filters: ErrorFilters, searchKey?: string): Promise<number> => {
    const counted = countedBy(filters);
    if (counted) {
      const row = await db.selectFrom('error_counts').select('errors')
        .where('dimension', '=', counted.dimension).where('value', '=', counted.value)
        .executeTakeFirst();
      return Number(row?.errors ?? 0);
    }
    if (onlyTriageFilters(filters)) {
      // The triage's counts (migration 031): a status's and an assignee's row, or the rows of one
      // status (one an assignee) or of one assignee (one a status) added up.
      let count = db.selectFrom('error_counts').select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('errors'), eb.lit(0)).as('total'));
      count = filters.status !== undefined
        ? count.where('dimension', '=', `triage.${filters.status}`)
        : count.where('dimension', 'in', TRIAGE_STATUSES.map((status) => `triage.${status}` as const));
      if (filters.assignee !== undefined) count = count.where('value', '=', filters.assignee === 'none' ? '' : String(filters.assignee));
      return Number((await count.executeTakeFirstOrThrow()).total);
    }
    const qAlone = Object.entries(filters).every(([name, value]) => name === 'q' || value === undefined);
    const indexed = qAlone && filters.q !== undefined && (searchKey === undefined || searchKey === filters.q.toLowerCase()) ? dialect.choose(errorIdsContaining)(filters.q.toLowerCase(), true) : undefined;
    if (indexed) {
      // The index's matches are the errors that match.
      const row = await sql<{ total: number | string }>`select count(*) as total from (${indexed}) as matches`.execute(db);
      return Number(row.rows[0]?.total);
    }
    let dimension: BreakdownDimension | undefined = filters.host !== undefined ? 'host' : filters.component !== undefined ? 'component' : undefined;
    // Both: counted from the rows of the one seen on fewer errors.
    if (filters.host !== undefined && filters.component !== undefined
      && await countMatching({ component: filters.component }) < await countMatching({ host: filters.host })) dimension = 'component';
    if (dimension === undefined) {
      // With a class, its index gives the errors to count, and the triage of each is read by key: not
      // every error of the status or assignee listed first to test them against.
      const fromIndex = filters.errorClass === undefined ? true : new Set(['q', 'errorClass'] as const);
      const row = await db.selectFrom('infrastructure_errors').select((eb) => eb.fn.countAll<number | string>().as('total'))
        .where((eb) => filtered(eb, filters, dialect, fromIndex, searchKey))
        .executeTakeFirstOrThrow();
      return Number(row.total);
    }
    const rest = { ...filters, [dimension]: undefined };
    const other = dimension === 'host' ? 'component' : 'host';
    if (rest.reported === undefined && rest.errorClass === undefined && rest.since === undefined && rest.until === undefined && rest.q === undefined) {
      // The others are the triage's and the other breakdown's, each tested by its key on the value's
      // breakdown rows: the errors' own rows are not read (a breakdown row and a triage row exist
      // exactly while their error does, docs/architecture.md#error-counts).
      const row = await db.selectFrom('error_breakdown as seen')
        .select((eb) => eb.fn.countAll<number | string>().as('total'))
        .where('seen.dimension', '=', dimension)
        .where('seen.value', '=', filters[dimension] as string)
        .where((eb) => {
          const conditions = [];
          if (rest.status !== undefined || rest.assignee !== undefined) {
            conditions.push(eb.exists(triagedAs(eb as unknown as ExpressionBuilder<Schema, 'infrastructure_errors'>, rest).whereRef('error_triage.error_id', '=', sql.ref('seen.error_id'))));
          }
          if (rest[other] !== undefined) {
            conditions.push(eb.exists(eb.selectFrom('error_breakdown as also').select('also.error_id').whereRef('also.error_id', '=', 'seen.error_id')
              .where('also.dimension', '=', other).where('also.value', '=', rest[other])));
          }
          return eb.and(conditions);
        })
        .executeTakeFirstOrThrow();
      return Number(row.total);
    }
    // The other filters tested on each of the value's errors by key when they are few; when many,
    // their own indexes' ids are read as well.
    const probed = await countMatching({ [dimension]: filters[dimension] }) <= PROBED_ROWS;
    const row = await db.selectFrom('error_breakdown')
      .innerJoin('infrastructure_errors', 'infrastructure_errors.id', 'error_breakdown.error_id')
      .select((eb) => eb.fn.countAll<number | string>().as('total'))
      .where('error_breakdown.dimension', '=', dimension)
      .where('error_breakdown.value', '=', filters[dimension] as string)
      // The other filters name columns of infrastructure_errors only, none of which error_breakdown has.
      .where((eb) => filtered(eb as unknown as ExpressionBuilder<Schema, 'infrastructure_errors'>, rest, dialect, !probed, searchKey))
      .executeTakeFirstOrThrow();
    return Number(row.total);
  };

  /**
   * PostgreSQL: the word of a search of several that its planner expects in the fewest errors (its
   * estimate from error_search's statistics, a plan made and not run), the longest among equals (more
   * trigrams, each a shorter list). The whole text's trigrams include those of every common word, each
   * a list of about every error to intersect: a whole message of 1,000,000 errors took 180 ms a search
   * (docs/benchmarks.md#error-list-queries-first-visits).
   */
  const rarestWord = async (words: readonly string[]): Promise<string> => {
    let best = words[0] as string;
    let fewest = Infinity;
    for (const word of words) {
      const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`explain (format json) ${errorIdsContaining.postgres(word, true)}`.execute(db);
      const n = Number(rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows']);
      if (n < fewest || (n === fewest && [...word].length > [...best].length)) [best, fewest] = [word, n];
    }
    return best;
  };

  /**
   * Which word of a search the trigram index is asked for. SQLite: a phrase of many trigrams reads
   * every trigram's list of rows, and the trigrams of common words are in most errors: a whole
   * message of 1,000,000 errors took over a second. Each word of 3 characters or more is
   * counted up to SEARCH_PROBE matches, and the rarest is asked for; each error it gives is tested
   * for the whole text (filtered). PostgreSQL: rarestWord.
   */
  const searchKeyOf = async (folded: string): Promise<string> => {
    const words = [...new Set(folded.split(/\s+/).filter((word) => [...word].length >= 3))];
    if (words.length === 0 || (words.length === 1 && words[0] === folded)) return folded;
    if (dialect.choose({ sqlite: false, postgres: true })) return rarestWord(words);
    let best = folded;
    let fewest = Infinity;
    for (const word of words) {
      const { rows } = await sql<{ n: number }>`select count(*) as n from (${errorIdsContaining.sqlite(word, true)} limit ${SEARCH_PROBE}) as found`.execute(db);
      const n = Number(rows[0]?.n);
      if (n < fewest) [best, fewest] = [word, n];
      if (n === 0) break;
    }
    return best;
  };

  /**
   * The reports to count: those without an event key, and those whose key is new (stored now, in the
   * batch's transaction, so it is counted exactly once in any number of processes); a repeated key
   * whose error is gone counts again. `repeated`: the errors the others were counted in.
   */
  const firstSeen = async (trx: Transaction<Schema>, reports: readonly ErrorReport[]): Promise<{ fresh: readonly ErrorReport[]; repeated: InfrastructureError[] }> => {
    const keyed = reports.filter((report) => report.event_key !== undefined);
    if (keyed.length === 0) return { fresh: reports, repeated: [] };
    const firstOf = new Map<string, ErrorReport>();
    for (const report of keyed) if (!firstOf.has(report.event_key as string)) firstOf.set(report.event_key as string, report);
    const inserted = new Set<string>();
    // In key order, as the errors are in fingerprint order: two batches never wait for each other's keys crosswise (PostgreSQL).
    const firsts = [...firstOf.values()].sort((a, b) => ((a.event_key as string) < (b.event_key as string) ? -1 : 1));
    for (const part of chunks(firsts)) {
      const rows = await trx.insertInto('ingested_events')
        .values(part.map((report) => ({ event_key: report.event_key as string, occurred_at: report.occurred_at.toISOString() })))
        .onConflict((oc) => oc.column('event_key').doNothing())
        .returning('event_key')
        .execute();
      for (const row of rows) inserted.add(row.event_key);
    }
    // The first report of each key is counted when its key is new; a later one of the batch never is.
    const skipped = new Set<ErrorReport>();
    const earlier: ErrorReport[] = [];
    const taken = new Set<string>();
    for (const report of keyed) {
      const key = report.event_key as string;
      if (taken.has(key)) skipped.add(report);
      else if (!inserted.has(key)) earlier.push(report);
      taken.add(key);
    }
    if (earlier.length === 0) return { fresh: skipped.size === 0 ? reports : reports.filter((report) => !skipped.has(report)), repeated: [] };
    const rows = await trx.selectFrom('infrastructure_errors').selectAll().where('fingerprint', 'in', [...new Set(earlier.map((report) => report.fingerprint))]).execute();
    const existing = new Set(rows.map((row) => row.fingerprint));
    for (const report of earlier) if (existing.has(report.fingerprint)) skipped.add(report);
    return { fresh: reports.filter((report) => !skipped.has(report)), repeated: rows.map(toRecord) };
  };

  return {
    /**
     * Counts a batch of reports in one transaction (the group commit of docs/architecture.md): one
     * upsert per distinct error (counter + n, atomic in the database: exact in any number of
     * processes), the hourly and per-host/component counts likewise, and the occurrences the sample
     * keeps. Answers, for each report in order, the record as the transaction left it and whether this
     * report created it. `inBatch`, when given, runs last in the same transaction with each error's
     * outcome (the alerts the batch causes go into the outbox with it: alerts/planner.ts).
     */
    async recordBatch(reports: readonly ErrorReport[], sample: SampleSize, inBatch?: InBatch, now = new Date()): Promise<Array<{ record: InfrastructureError; created: boolean }>> {
      let groups: Group[] = [];
      const outcome = new Map<string, { record: InfrastructureError; created: boolean }>();
      await trackerTransaction(async (trx) => {
        // Filled afresh should the transaction run again (db/conflicts.ts).
        outcome.clear();
        const { fresh, repeated } = await firstSeen(trx, reports);
        for (const record of repeated) outcome.set(record.fingerprint, { record, created: false });
        groups = groupByFingerprint(fresh);
        const stored = new Map<string, InfrastructureError>();
        const storedRows: Array<Selectable<InfrastructureErrorsTable>> = [];
        for (const part of chunks(groups)) {
          const parameters: unknown[] = [];
          for (const group of part) {
            // The text of the occurrence that happened last (the last to arrive among equals).
            const latest = group.reports.reduce((a, b) => (b.occurred_at >= a.occurred_at ? b : a));
            parameters.push(group.fingerprint, latest.error_class, latest.message, latest.backtrace, group.count, 0, group.firstAt, group.lastAt);
          }
          const { rows } = await trx.executeQuery<Selectable<InfrastructureErrorsTable>>(
            CompiledQuery.raw(rowsText(dialect.choose(placeholderRows), ERRORS_UPSERT, part.length), parameters),
          );
          for (const row of rows) stored.set(row.fingerprint, toRecord(row));
          storedRows.push(...rows);
        }

        // Flat rows (BatchRows): the histogram's and the breakdown's keyed, to add each report to its row.
        const hours = new Map<string, unknown[]>();
        const breakdown = new Map<string, unknown[]>();
        const occurrences: unknown[] = [];
        const trims: Array<[number, number]> = [];
        for (const group of groups) {
          const record = stored.get(group.fingerprint) as InfrastructureError;
          outcome.set(group.fingerprint, { record, created: record.counter === group.count });
          // The batch's occurrences take the ordinals counter - count + 1 .. counter, in arrival order.
          let ordinal = record.counter - group.count;
          const keepFrom = record.counter - sample.latest;
          // The sample sheds what falls between the first `first` and the latest `latest`.
          const trimmed = keepFrom > sample.first;
          for (const report of group.reports) {
            ordinal += report.count;
            const at = report.occurred_at.toISOString();
            const hour = hourOf(report.occurred_at);
            const hourKey = `${record.id}|${hour}`;
            const bucket = hours.get(hourKey);
            if (bucket) (bucket[2] as number) += report.count;
            else hours.set(hourKey, [record.id, hour, report.count]);
            for (const dimension of ['host', 'component'] as const) {
              const value = report[dimension] ?? '';
              const key = `${record.id}|${dimension}|${value}`;
              const row = breakdown.get(key);
              if (!row) breakdown.set(key, [record.id, dimension, value, report.count, at]);
              else {
                (row[3] as number) += report.count;
                if (at > (row[4] as string)) row[4] = at;
              }
            }
            // Kept when among the first or the latest, and not in what the trim below sheds.
            const kept = (ordinal - report.count < sample.first || ordinal > keepFrom) && !(trimmed && ordinal > sample.first && ordinal <= keepFrom);
            if (kept) occurrences.push(record.id, ordinal, at, report.count, report.host, report.component, report.request_id, report.message, report.context);
          }
          if (trimmed) trims.push([record.id, keepFrom]);
        }
        // The first sighting of each error the batch created, in the activity (docs/api.md#error-triage).
        const sighted: unknown[] = [];
        for (const row of [...storedRows].sort((a, b) => Number(a.id) - Number(b.id))) {
          if (outcome.get(row.fingerprint)?.created) sighted.push(Number(row.id), row.created_at, null, 'first_seen', '{}');
        }
        const triaged = await dialect.choose(writeBatchRows)(
          trx,
          { hours: [...hours.values()].flat(), breakdown: [...breakdown.values()].flat(), occurrences, firstSeen: sighted, trims },
          sample.first,
          storedRows.map((row) => Number(row.id)),
        );
        // Regressions and wakes (tracker/triage-batch.ts), in this transaction, on the rows it holds.
        const triage = await triageInBatch(trx, storedRows, now, triaged);
        if (inBatch) {
          const outcomes = groups.map((group) => {
            const one = outcome.get(group.fingerprint) as { record: InfrastructureError; created: boolean };
            return {
              ...one, added: group.count, triage: triage.get(one.record.id) as BatchTriage,
              hosts: [...new Set(group.reports.map((report) => report.host).filter((value): value is string => value !== null))],
              components: [...new Set(group.reports.map((report) => report.component).filter((value): value is string => value !== null))],
            };
          });
          await inBatch(trx, outcomes);
        }
      });
      const answers: Array<{ record: InfrastructureError; created: boolean }> = [];
      const answered = new Set<string>();
      for (const report of reports) {
        const { record, created } = outcome.get(report.fingerprint) as { record: InfrastructureError; created: boolean };
        // Only the first report of a new error created it.
        answers.push({ record, created: created && !answered.has(report.fingerprint) });
        answered.add(report.fingerprint);
      }
      return answers;
    },

    async findById(id: number): Promise<InfrastructureError | undefined> {
      const { rows } = await db.executeQuery<Selectable<InfrastructureErrorsTable>>(CompiledQuery.raw(findByIdSql, [id]));
      return rows[0] && toRecord(rows[0]);
    },

    /** A page of errors matching `filters`, in `sort` order (ties by id the same way), and how many match. */
    async list(filters: ErrorFilters, sort: ErrorSort, direction: Direction, limit: number, offset: number): Promise<{ items: InfrastructureError[]; total: number }> {
      // Counted first: the count says how to read the page, and whether there is one.
      const searchKey = filters.q === undefined ? undefined : await searchKeyOf(filters.q.toLowerCase());
      const total = await countMatching(filters, searchKey);
      if (total <= offset) return { items: [], total };
      const all = await countMatching({});
      const walkCheaper = (matches: number) => matches * matches > WALKED_ROW_COST * (offset + limit) * all;
      const indexed = filters.q !== undefined || filters.host !== undefined || filters.component !== undefined || filters.status !== undefined || filters.assignee !== undefined;
      const fromIndex = new Set<'status' | 'q' | 'host' | 'component' | 'errorClass'>();
      // A part of the list's own filters: counted once (the bound and the index read ask the same),
      // unless it is all of them (then it is `total`).
      const given = (some: ErrorFilters) => Object.values(some).filter((value) => value !== undefined).length;
      const counted = new Map<string, Promise<number>>();
      const countOf = (part: ErrorFilters): number | Promise<number> => {
        if (given(part) === given(filters)) return total;
        const key = JSON.stringify(part);
        let count = counted.get(key);
        if (count === undefined) counted.set(key, (count = countMatching(part)));
        return count;
      };
      const readFromIndexes = async () => {
        for (const name of ['status', 'q', 'host', 'component'] as const) fromIndex.add(name);
        // Seen on a host and a component: the ids of the one seen on fewer errors, the other tested
        // on each of them by its breakdown key (not two lists of ids intersected).
        if (filters.host !== undefined && filters.component !== undefined) {
          const [host, component] = await Promise.all([countOf({ host: filters.host }), countOf({ component: filters.component })]);
          fromIndex.delete(host <= component ? 'component' : 'host');
        }
      };
      const walking = indexed && walkCheaper(total);
      if (indexed && !walking) await readFromIndexes();
      // A class's index gives the list's order only by updated_at: by another, its errors are read
      // and sorted, which costs more than walking the order when many are of the class.
      if (filters.errorClass !== undefined && (sort === 'updated_at' || !walkCheaper(filters.reported === undefined && !indexed ? total : await countMatching({ errorClass: filters.errorClass })))) fromIndex.add('errorClass');
      // walkCheaper takes the matches as spread evenly through the order; when they are not (a host's
      // errors all older than an incident's on other hosts), the walk passes many errors for each
      // match. It reads at most as many errors as the index read would cost (the ids of the filter
      // seen on the fewest errors, each a third of a walked row: their error_counts rows; the matches
      // when only `q` is read from an index), and the page is read from the indexes when that prefix
      // of the order did not hold the whole page.
      const readByIndex = async () => {
        const counts = await Promise.all([
          filters.host === undefined ? Infinity : countOf({ host: filters.host }),
          filters.component === undefined ? Infinity : countOf({ component: filters.component }),
          filters.status === undefined && filters.assignee === undefined ? Infinity : countOf({ status: filters.status, assignee: filters.assignee }),
        ]);
        const fewest = Math.min(...counts);
        return fewest === Infinity ? total : fewest;
      };
      const bound = walking ? Math.max(offset + limit, Math.ceil(await readByIndex() / WALKED_ROW_COST)) : all;
      if (walking && bound < all) {
        const walked = await dialect.choose(readPage)(db, filters, dialect, fromIndex, searchKey, sort, direction, limit, offset, bound);
        if (walked.length === Math.min(limit, total - offset)) return { items: walked.map(toRecord), total };
        await readFromIndexes();
      }
      const rows = await dialect.choose(readPage)(db, filters, dialect, fromIndex, searchKey, sort, direction, limit, offset, walking ? 'never' : undefined);
      return { items: rows.map(toRecord), total };
    },

    /** Marks an error reported (its other fields as they were), with a `report` activity row; undefined when there is none. */
    async markReported(id: number, actorId: number | null, now: Date): Promise<InfrastructureError | undefined> {
      return trackerTransaction(async (trx) => {
        const row = await trx.updateTable('infrastructure_errors').set({ reported: 1 }).where('id', '=', id).where('reported', '=', 0).returningAll().executeTakeFirst();
        if (!row) {
          const already = await trx.selectFrom('infrastructure_errors').selectAll().where('id', '=', id).executeTakeFirst();
          return already && toRecord(already);
        }
        // The error's activity (tracker/triage.store.ts) records who reported it.
        await trx.insertInto('error_activity').values({ error_id: id, at: now.toISOString(), actor_id: actorId, action: 'report', details: '{}' }).execute();
        return toRecord(row);
      });
    },

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

    /** The kept occurrences of an error, newest first (by when they happened; the latest to arrive first among equals). */
    async occurrences(errorId: number, limit: number, offset: number): Promise<{ items: StoredOccurrence[]; total: number }> {
      const [rows, count] = await Promise.all([
        db.selectFrom('error_occurrences')
          .select(['id', 'occurred_at', 'host', 'component', 'request_id', 'message', 'context'])
          .where('error_id', '=', errorId)
          .orderBy('occurred_at', 'desc').orderBy('id', 'desc')
          .limit(limit).offset(offset)
          .execute(),
        db.selectFrom('error_occurrences').select((eb) => eb.fn.countAll<number | string>().as('total'))
          .where('error_id', '=', errorId).executeTakeFirstOrThrow(),
      ]);
      return {
        items: rows.map((row) => ({ ...row, id: Number(row.id), occurred_at: new Date(row.occurred_at) })),
        total: Number(count.total),
      };
    },

    /** Occurrences per hour from `fromHour` to `toHour` (inclusive); hours with none are absent. */
    async hourlyCounts(errorId: number, fromHour: number, toHour: number): Promise<Map<number, number>> {
      const rows = await db.selectFrom('error_histogram').select(['hour', 'count'])
        .where('error_id', '=', errorId).where('hour', '>=', fromHour).where('hour', '<=', toHour)
        .execute();
      return new Map(rows.map((row) => [Number(row.hour), Number(row.count)]));
    },

    /** hourlyCounts of several errors in one statement (a page of the console's list), by error id. */
    async hourlyCountsOf(errorIds: readonly number[], fromHour: number, toHour: number): Promise<Map<number, Map<number, number>>> {
      const byError = new Map<number, Map<number, number>>(errorIds.map((id) => [id, new Map()]));
      if (errorIds.length === 0) return byError;
      const rows = await db.selectFrom('error_histogram').select(['error_id', 'hour', 'count'])
        .where('error_id', 'in', [...errorIds]).where('hour', '>=', fromHour).where('hour', '<=', toHour)
        .execute();
      for (const row of rows) byError.get(Number(row.error_id))?.set(Number(row.hour), Number(row.count));
      return byError;
    },

    /** Occurrences per host or component, largest first ('' is "not given"). */
    async breakdown(errorId: number, dimension: BreakdownDimension, limit: number, offset: number): Promise<{ items: Array<{ value: string; count: number }>; total: number }> {
      const [rows, count] = await Promise.all([
        db.selectFrom('error_breakdown').select(['value', 'count'])
          .where('error_id', '=', errorId).where('dimension', '=', dimension)
          .orderBy('count', 'desc').orderBy('value', 'asc')
          .limit(limit).offset(offset)
          .execute(),
        db.selectFrom('error_breakdown').select((eb) => eb.fn.countAll<number | string>().as('total'))
          .where('error_id', '=', errorId).where('dimension', '=', dimension).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map((row) => ({ value: row.value, count: Number(row.count) })), total: Number(count.total) };
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

export type InfrastructureErrorsRepository = ReturnType<typeof infrastructureErrorsRepository>;
