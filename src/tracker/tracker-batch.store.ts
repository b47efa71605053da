import { CompiledQuery, type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { PerDatabase } from '../db/dialects/dialect.js';
import type { InfrastructureErrorsTable, Schema } from '../db/schema.js';
import { type BatchTriage, type ErrorReport, hourOf, type InBatch, type InfrastructureError, type SampleSize } from './infrastructure-error.js';
import { toRecord, trackerTransactions } from './tracker-sql.js';
import { triageInBatch } from './triage-batch.js';

/** At most this many rows go into one multi-row statement (well under both databases' parameter limits). */
const ROWS_PER_STATEMENT = 500;

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
  head: 'insert into error_breakdown (error_id, dimension, value, count, first_seen_at, last_seen_at) values ',
  width: 6,
  // A row written before migration 047 keeps its unknown (null) first sighting.
  tail: ` on conflict (error_id, dimension, value) do update set count = error_breakdown.count + excluded.count,
    first_seen_at = case when excluded.first_seen_at < error_breakdown.first_seen_at then excluded.first_seen_at else error_breakdown.first_seen_at end,
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
type TriagedRow = Pick<Selectable<Schema['error_triage']>, 'error_id' | 'triage_status' | 'snoozed_until' | 'snooze_until_counter' | 'resolved_in_release'>;

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
        ? `select error_id, triage_status, snoozed_until, snooze_until_counter, resolved_in_release from error_triage where error_id = any($${parameters.length + 1}::integer[]) and triage_status <> 'unresolved'`
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

/** The release a report's context gave (its facet), or null. */
const releaseOf = (report: ErrorReport): string | null => report.facets?.find(([dimension]) => dimension === 'release')?.[1] ?? null;

/**
 * The releases a batch's reports carried (docs/search.md#releases), in name order (one lock order for
 * every writer): first seen, the errors whose first occurrence carried it, the regressions the
 * latest report with a release of a reopened error caused.
 */
async function countReleases(trx: Transaction<Schema>, outcomes: ReadonlyArray<{ group: Group; created: boolean; regressed: boolean }>): Promise<void> {
  const releases = new Map<string, { name: string; first_seen_at: string; errors_new: number; regressions: number }>();
  const release = (name: string, at: string) => {
    let row = releases.get(name);
    if (!row) releases.set(name, row = { name, first_seen_at: at, errors_new: 0, regressions: 0 });
    else if (at < row.first_seen_at) row.first_seen_at = at;
    return row;
  };
  for (const { group, created, regressed } of outcomes) {
    let earliest: ErrorReport | undefined;
    let latest: ErrorReport | undefined;
    for (const report of group.reports) {
      const name = releaseOf(report);
      if (name !== null) {
        release(name, report.occurred_at.toISOString());
        if (!latest || report.occurred_at >= latest.occurred_at) latest = report;
      }
      if (!earliest || report.occurred_at < earliest.occurred_at) earliest = report;
    }
    const first = earliest && releaseOf(earliest);
    if (created && first) release(first, earliest!.occurred_at.toISOString()).errors_new++;
    if (regressed && latest) release(releaseOf(latest)!, latest.occurred_at.toISOString()).regressions++;
  }
  if (releases.size === 0) return;
  const rows = [...releases.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const part of chunks(rows)) {
    await trx.insertInto('releases').values(part)
      .onConflict((oc) => oc.column('name').doUpdateSet({
        first_seen_at: sql`case when releases.first_seen_at is null or excluded.first_seen_at < releases.first_seen_at then excluded.first_seen_at else releases.first_seen_at end`,
        errors_new: sql`releases.errors_new + excluded.errors_new`,
        regressions: sql`releases.regressions + excluded.regressions`,
      }))
      .execute();
  }
}

/** Recording reports: the batch write of the group commit (docs/architecture.md#error-ingestion). */
export function trackerBatchStore(database: Database) {
  const { dialect } = database;
  const trackerTransaction = trackerTransactions(database);

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
            const seen = (dimension: string, value: string) => {
              const key = `${record.id}|${dimension}|${value}`;
              const row = breakdown.get(key);
              if (!row) breakdown.set(key, [record.id, dimension, value, report.count, at, at]);
              else {
                (row[3] as number) += report.count;
                if (at < (row[4] as string)) row[4] = at;
                if (at > (row[5] as string)) row[5] = at;
              }
            };
            seen('host', report.host ?? '');
            seen('component', report.component ?? '');
            // Release, environment, level and tags: only where the report gave them (no '' row).
            for (const [dimension, value] of report.facets ?? []) seen(dimension, value);
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
        const releasesOf = new Map<number, Array<string | null>>();
        for (const group of groups) releasesOf.set((stored.get(group.fingerprint) as InfrastructureError).id, [...new Set(group.reports.map(releaseOf))]);
        const triage = await triageInBatch(trx, storedRows, now, triaged, releasesOf);
        await countReleases(trx, groups.map((group) => {
          const { record, created } = outcome.get(group.fingerprint) as { record: InfrastructureError; created: boolean };
          return { group, created, regressed: (triage.get(record.id) as BatchTriage).regressed };
        }));
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
  };
}
