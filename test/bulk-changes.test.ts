import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from '../src/db/database.js';
import type { Database } from '../src/db/database.js';
import type { ErrorFilters, ErrorReport } from '../src/tracker/infrastructure-error.js';
import { filtered } from '../src/tracker/tracker-sql.js';
import { trackerRepository } from '../src/tracker/tracker.store.js';
import { triageRepository } from '../src/tracker/triage.store.js';
import { databasePerTest, onPostgres } from './support/database.js';
import { errorCountsAgainstRows } from '../tools/shared/error-counts.js';

// Bulk changes by filter (report, triage, delete) keep every count the list shows exact, per
// statement rather than per row (migration 026; docs/architecture.md#error-counts), also while single
// reports and changes run beside them.

const SAMPLE = { first: 10, latest: 100 };
const AT = Date.parse('2026-11-20T10:00:00.000Z');
const HOUR = 3_600_000;
const ERRORS = 2_400;
const CLASSES = 7;
const HOSTS = 37;
const COMPONENTS = 11;

const fingerprint = (i: number) => i.toString(16).padStart(64, '0');

/** Error i: class C<i mod 7>, host hv-<i mod 37> (every fifth also hv-<i+3 mod 37>), component comp-<i mod 11>, last seen at hour i mod 3. */
function reportsOf(i: number, at = new Date(AT + (i % 3) * HOUR)): ErrorReport[] {
  const one = (host: string): ErrorReport => ({
    fingerprint: fingerprint(i), error_class: `C${i % CLASSES}`, message: `volume ${i} detached on ${host}`, backtrace: '',
    occurred_at: at, count: 1, host, component: `comp-${i % COMPONENTS}`, request_id: null, context: null,
  });
  return i % 5 === 0 ? [one(`hv-${i % HOSTS}`), one(`hv-${(i + 3) % HOSTS}`)] : [one(`hv-${i % HOSTS}`)];
}

async function seed(database: Database): Promise<void> {
  const errors = trackerRepository(database);
  for (let from = 0; from < ERRORS; from += 400) {
    await errors.recordBatch(Array.from({ length: 400 }, (_, k) => reportsOf(from + k)).flat(), SAMPLE, undefined, new Date(AT));
  }
}

/**
 * Every count kept beside the errors against the rows themselves: error_counts (rows of 0 left out),
 * one triage row per error and none else, the text index's matches, and the X-Total the store answers
 * for each filter a count is kept for.
 */
async function assertExact(database: Database, label: string): Promise<void> {
  const db = database.db;
  const { stored, counted } = await errorCountsAgainstRows(db);
  assert.deepEqual(stored, counted, `${label}: error_counts`);

  const triage = await sql<{ errors: number | string; triaged: number | string; orphans: number | string }>`
    select (select count(*) from infrastructure_errors) as errors, (select count(*) from error_triage) as triaged,
      (select count(*) from error_triage where error_id not in (select id from infrastructure_errors)) as orphans`.execute(db);
  const row = triage.rows[0] as { errors: number | string; triaged: number | string; orphans: number | string };
  assert.deepEqual([Number(row.triaged), Number(row.orphans)], [Number(row.errors), 0], `${label}: one triage row per error`);

  const errors = trackerRepository(database);
  const total = async (filters: ErrorFilters) => (await errors.list(filters, 'updated_at', 'desc', 1, 0)).total;
  const rowsMatching = async (filters: ErrorFilters) =>
    Number((await db.selectFrom('infrastructure_errors').select((eb) => eb.fn.countAll<number | string>().as('n')).where((eb) => filtered(eb, filters, database.dialect)).executeTakeFirstOrThrow()).n);
  const filters: ErrorFilters[] = [
    {}, { reported: true }, { reported: false }, { errorClass: 'C3' }, { host: 'hv-5' }, { component: 'comp-4' },
    { status: 'resolved' }, { status: 'unresolved' }, { q: 'volume 1' }, { q: 'detached on hv-2' }, { q: 'c6' },
    // The pairs with the state (migration 028).
    { reported: false, errorClass: 'C3' }, { reported: true, errorClass: 'C3' }, { reported: true, host: 'hv-5' }, { reported: false, host: 'hv-late' },
    { reported: false, component: 'comp-4' }, { reported: true, component: 'comp-4' },
    // A class with the triage's filters (each error's triage read by key), a status with an assignee (migration 028's index).
    { status: 'unresolved', reported: false, errorClass: 'C3' }, { status: 'resolved', errorClass: 'C1' }, { assignee: 'none', status: 'unresolved' },
  ];
  for (const one of filters) assert.equal(await total(one), await rowsMatching(one), `${label}: X-Total of ${JSON.stringify(one)}`);
}

/** Single reports during a bulk change: a repeat of every 97th error (from another host) and new errors from `next` on, one a batch. */
function singleReports(database: Database, next: number): Array<Promise<unknown>> {
  const errors = trackerRepository(database);
  const repeats = Array.from({ length: 12 }, (_, k) => k * 197).map((i) => errors.recordBatch([{ ...(reportsOf(i)[0] as ErrorReport), host: 'hv-late' }], SAMPLE));
  const fresh = Array.from({ length: 12 }, (_, k) => errors.recordBatch(reportsOf(next + k), SAMPLE));
  return [...repeats, ...fresh];
}

describe('bulk changes by filter', () => {
  const each = databasePerTest();

  it('reported in one statement, triage and delete by filter: every count exact, with single reports and changes beside them', async () => {
    await migrateToLatest(each.database);
    const { database } = each;
    const db = database.db;
    const errors = trackerRepository(database);
    const triage = triageRepository(database);
    await seed(database);
    await assertExact(database, 'seeded');

    // Marked reported in one hand-written statement: the errors last seen in the first hour, a third,
    // spread over every class, host and component; single reports and marks beside it.
    const reportedCount = db.updateTable('infrastructure_errors').set({ reported: 1 })
      .where((eb) => filtered(eb, { until: new Date(AT) }, database.dialect)).executeTakeFirst();
    const marks = [3, 4, 5, 1000, 1001].map((i) => errors.markReported(i + 1, null, new Date(AT)));
    const [result] = await Promise.all([reportedCount, ...marks, ...singleReports(database, ERRORS)]);
    assert.ok(Number(result.numUpdatedRows) >= ERRORS / 3 - 12, `a third marked reported: ${result.numUpdatedRows}`);
    await assertExact(database, 'after report');
    // And back, some of them, with a change of class in the same statement.
    await db.updateTable('infrastructure_errors').set({ reported: 0, error_class: 'C-moved' }).where('error_class', '=', 'C2').execute();
    await assertExact(database, 'after a change of state and class');

    // Triage by filter (resolved where component = comp-1 or by status), single triage changes beside it.
    const [resolved] = await Promise.all([
      triage.changeMany({ filters: { component: 'comp-1' } }, { status: 'resolved' }, null, new Date(AT)),
      triage.change(2, { status: 'ignored' }, null, new Date(AT)),
      ...singleReports(database, ERRORS + 100),
    ]);
    assert.ok(resolved > 0, 'resolved some');
    await triage.changeMany({ filters: { status: 'unresolved', reported: true } }, { status: 'ignored' }, null, new Date(AT));
    await assertExact(database, 'after triage');

    // Delete by filter: the errors last seen in the third hour (a third), with single reports beside it,
    // some of them repeats of errors it deletes; then by host; then a single delete by hand (the row
    // triggers run for any other writer).
    const before = Number((await db.selectFrom('infrastructure_errors').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const [deleted] = await Promise.all([errors.deleteMatching({ since: new Date(AT + 2 * HOUR) }), ...singleReports(database, ERRORS + 200)]);
    assert.ok(deleted >= ERRORS / 3 - 24 && deleted < before, `a third deleted: ${deleted}`);
    await assertExact(database, 'after delete by time');
    assert.ok(await errors.deleteMatching({ host: 'hv-7' }) > 0, 'deleted by host');
    await db.deleteFrom('infrastructure_errors').where('id', '=', 10).execute();
    await db.deleteFrom('error_breakdown').where('error_id', '=', 10).execute();
    await assertExact(database, 'after delete by host and by hand');

    // Everything else: nothing is left counted.
    await errors.deleteMatching({});
    await assertExact(database, 'after deleting all');
    assert.deepEqual(await db.selectFrom('error_counts').select('dimension').where('errors', '<>', 0).execute(), []);
  });

  it('a change of state made by hand in another search_path keeps the counts (PostgreSQL: the trigger names the table\'s schema, migration 026)', { skip: !onPostgres && 'SQLite has no schemas on a search path' }, async () => {
    await migrateToLatest(each.database);
    const { database } = each;
    await seed(database);
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db);
    // A DBA in psql: the database's default search_path, the table named with its schema.
    const dba = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await dba.connect();
    try {
      await dba.query(`update "${rows[0]!.schema}".infrastructure_errors set reported = 1 where id % 4 = 0`);
    } finally {
      await dba.end();
    }
    await assertExact(database, 'after a change by hand');
  });
});
