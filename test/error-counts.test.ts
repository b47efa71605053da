import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createQueryId, type Kysely, type KyselyPlugin, type RootOperationNode, sql } from 'kysely';
import { migrateTo, migrateToLatest } from '../src/db/database.js';
import type { ErrorReport } from '../src/tracker/infrastructure-error.js';
import { filtered } from '../src/tracker/tracker-sql.js';
import { trackerRepository } from '../src/tracker/tracker.store.js';
import type { Schema } from '../src/db/schema.js';
import { databasePerTest, onPostgres } from './support/database.js';
import { errorCountsAgainstRows } from '../tools/shared/error-counts.js';
import { writeErrorsBeforeTriage } from './support/errors-before-triage.js';

// X-Total for no filter, one equality filter, or `reported` with a class, host or component is read from
// error_counts (migrations 007 and 028), kept by
// triggers (docs/architecture.md#error-counts); these tests hold it to counts over the rows themselves.

const SAMPLE = { first: 10, latest: 100 };
const AT = new Date('2026-11-20T10:00:00.000Z');

function reportOf(errorClass: string, host: string | null, component: string | null, fingerprint = randomBytes(32).toString('hex')): ErrorReport {
  return { fingerprint, error_class: errorClass, message: `${errorClass} failed`, backtrace: '', occurred_at: AT, count: 1, host, component, request_id: null, context: null };
}

async function assertCountsMatchRows(db: Kysely<Schema>, expected: string[]): Promise<void> {
  const { stored, counted } = await errorCountsAgainstRows(db);
  assert.deepEqual([...counted].sort(), [...expected].sort(), 'the rows themselves');
  assert.deepEqual(stored, counted, 'error_counts');
}

describe('error_counts (migration 007)', () => {
  const each = databasePerTest();

  it('follows new errors, repeats, new hosts of a known error, reported both ways, a class change, deletes and retention', async () => {
    await migrateToLatest(each.database);
    const { db } = each.database;
    const errors = trackerRepository(each.database);
    const known = randomBytes(32).toString('hex');
    // One batch: a new error reported three times from two hosts, two more errors, one with no host or component.
    const recorded = await errors.recordBatch([
      reportOf('Storage::Timeout', 'hv-1', 'storage', known),
      reportOf('Storage::Timeout', 'hv-1', 'storage', known),
      reportOf('Storage::Timeout', 'hv-2', 'storage', known),
      reportOf('Storage::Timeout', 'hv-2', 'storage'),
      reportOf('Net::ReadTimeout', null, null),
    ], SAMPLE);
    const [first, , , second, third] = recorded.map((answer) => answer.record.id) as [number, number, number, number, number];
    await assertCountsMatchRows(db, [
      'all::3', 'component::1', 'component:storage:2', 'error_class:Net::ReadTimeout:1', 'error_class:Storage::Timeout:2',
      'host::1', 'host:hv-1:1', 'host:hv-2:2', 'reported:0:3',
      // The pairs with the state (migration 028): all three unreported.
      'error_class.0:Net::ReadTimeout:1', 'error_class.0:Storage::Timeout:2', 'component.0::1', 'component.0:storage:2',
      'host.0::1', 'host.0:hv-1:1', 'host.0:hv-2:2',
      // The triage's (migration 031): all three unresolved, assigned to no one.
      'triage.unresolved::3',
    ]);

    // A repeat in a later batch, from a third host: only the host count moves.
    await errors.recordBatch([reportOf('Storage::Timeout', 'hv-3', 'storage', known)], SAMPLE);
    await db.updateTable('infrastructure_errors').set({ reported: 1 }).where('id', 'in', [first, third]).execute();
    await db.updateTable('infrastructure_errors').set({ reported: 0 }).where('id', '=', third).execute();
    await db.updateTable('infrastructure_errors').set({ error_class: 'Storage::SlowOps' }).where('id', '=', second).execute();
    await assertCountsMatchRows(db, [
      'all::3', 'component::1', 'component:storage:2', 'error_class:Net::ReadTimeout:1', 'error_class:Storage::SlowOps:1', 'error_class:Storage::Timeout:1',
      'host::1', 'host:hv-1:1', 'host:hv-2:2', 'host:hv-3:1', 'reported:0:2', 'reported:1:1',
      'error_class.0:Net::ReadTimeout:1', 'error_class.0:Storage::SlowOps:1', 'error_class.1:Storage::Timeout:1',
      'component.0::1', 'component.0:storage:1', 'component.1:storage:1', 'host.0::1', 'host.0:hv-2:1', 'host.1:hv-1:1', 'host.1:hv-2:1', 'host.1:hv-3:1',
      'triage.unresolved::3',
    ]);

    assert.equal(await errors.deleteById(first), true);
    await assertCountsMatchRows(db, [
      'all::2', 'component::1', 'component:storage:1', 'error_class:Net::ReadTimeout:1', 'error_class:Storage::SlowOps:1',
      'host::1', 'host:hv-2:1', 'reported:0:2',
      'error_class.0:Net::ReadTimeout:1', 'error_class.0:Storage::SlowOps:1', 'component.0::1', 'component.0:storage:1', 'host.0::1', 'host.0:hv-2:1',
      'triage.unresolved::2',
    ]);

    // Retention deletes what was not updated since; the list then counts from nothing.
    assert.deepEqual(await errors.prune(new Date(AT.getTime() + 1), 0), { errors: 2, buckets: 0 });
    await assertCountsMatchRows(db, []);
    assert.deepEqual(await errors.list({}, 'updated_at', 'desc', 25, 0), { items: [], total: 0 });
  });

  it('answers X-Total from it for each single filter, and by counting for combined ones, the same as the rows', async () => {
    await migrateToLatest(each.database);
    const errors = trackerRepository(each.database);
    const classes = ['A', 'B', 'C'];
    await errors.recordBatch(Array.from({ length: 30 }, (_, i) => reportOf(classes[i % 3] as string, `hv-${i % 4}`, i % 5 === 0 ? null : 'storage')), SAMPLE);
    await each.database.db.updateTable('infrastructure_errors').set({ reported: 1 }).where(sql<boolean>`id % 2 = 0`).execute();
    const reportedCount = (await each.database.db.selectFrom('infrastructure_errors').select('id').where('reported', '=', 1).execute()).length;
    const cases: Array<[Parameters<typeof errors.list>[0], number]> = [
      [{}, 30], [{ reported: true }, reportedCount], [{ reported: false }, 30 - reportedCount], [{ errorClass: 'B' }, 10], [{ errorClass: 'Z' }, 0],
      [{ host: 'hv-1' }, 8], [{ component: 'storage' }, 24], [{ component: 'network' }, 0], [{ errorClass: 'A', host: 'hv-0' }, 3],
    ];
    for (const [filters, total] of cases) {
      const page = await errors.list(filters, 'updated_at', 'desc', 5, 0);
      assert.equal(page.total, total, JSON.stringify(filters));
      assert.equal(page.items.length, Math.min(5, total), JSON.stringify(filters));
    }
    // A host or component with the triage's filters or the other breakdown's only: counted from the
    // breakdown rows alone, the same as the errors' rows tested.
    await each.database.db.updateTable('error_triage').set({ triage_status: 'resolved' }).where(sql<boolean>`error_id % 3 = 0`).execute();
    const combined: Array<Parameters<typeof errors.list>[0]> = [
      { host: 'hv-1', component: 'storage' }, { host: 'hv-2', component: 'network' }, { status: 'resolved', component: 'storage' },
      { status: 'unresolved', host: 'hv-0' }, { status: 'resolved', host: 'hv-3', component: 'storage' }, { assignee: 'none', host: 'hv-1' },
    ];
    for (const filters of combined) {
      const rows = await each.database.db.selectFrom('infrastructure_errors').select('id').where((eb) => filtered(eb, filters, each.database.dialect)).execute();
      assert.equal((await errors.list(filters, 'updated_at', 'desc', 5, 0)).total, rows.length, JSON.stringify(filters));
    }
  });

  it('follows the triage (migration 031): status and assignee changed one and many at a time, deletes; X-Total of status= and assignee= from it', async () => {
    await migrateToLatest(each.database);
    const { db } = each.database;
    const errors = trackerRepository(each.database);
    const ids = (await errors.recordBatch(Array.from({ length: 6 }, () => reportOf('A', null, null)), SAMPLE)).map((answer) => answer.record.id);
    const [e0, e1, e2, e3, e4] = ids as [number, number, number, number, number];
    await db.updateTable('error_triage').set({ triage_status: 'resolved' }).where('error_id', 'in', [e0, e1]).execute();
    await db.updateTable('error_triage').set({ assignee_id: 7 }).where('error_id', 'in', [e1, e2]).execute();
    await db.updateTable('error_triage').set({ triage_status: 'ignored', assignee_id: 7 }).where('error_id', '=', e3).execute();
    // A change of neither status nor assignee moves no count.
    await db.updateTable('error_triage').set({ snoozed_until: AT.toISOString() }).where('error_id', '=', e4).execute();
    const triageCounts = async () => {
      const { stored, counted } = await errorCountsAgainstRows(db);
      assert.deepEqual(stored, counted, 'error_counts');
      return counted.filter((line) => line.startsWith('triage.')).sort();
    };
    assert.deepEqual(await triageCounts(), ['triage.ignored:7:1', 'triage.resolved:7:1', 'triage.resolved::1', 'triage.unresolved:7:1', 'triage.unresolved::2']);
    const cases: Array<[Parameters<typeof errors.list>[0], number]> = [
      [{ status: 'resolved' }, 2], [{ status: 'unresolved' }, 3], [{ status: 'snoozed' }, 0], [{ assignee: 7 }, 3], [{ assignee: 8 }, 0],
      [{ assignee: 'none' }, 3], [{ status: 'unresolved', assignee: 'none' }, 2], [{ status: 'ignored', assignee: 7 }, 1], [{ status: 'resolved', assignee: 8 }, 0],
    ];
    const totals = async () => Promise.all(cases.map(async ([filters]) => (await errors.list(filters, 'updated_at', 'desc', 5, 0)).total));
    assert.deepEqual(await totals(), cases.map(([, total]) => total));

    assert.equal(await errors.deleteById(e1), true);
    assert.equal(await errors.deleteMatching({ status: 'unresolved' }), 3);
    assert.deepEqual(await triageCounts(), ['triage.ignored:7:1', 'triage.resolved::1']);
    assert.deepEqual(await totals(), [1, 0, 0, 1, 0, 1, 0, 1, 0]);
  });

  it('reads the page of a walked host, component or status with the row filters in the list order (PostgreSQL: ids from the index entries, rows after)', async () => {
    await migrateToLatest(each.database);
    const { db } = each.database;
    const errors = trackerRepository(each.database);
    // Most errors on `storage`, so the list walks its order and tests each (docs/architecture.md#the-page).
    const reports = Array.from({ length: 40 }, (_, i) => ({ ...reportOf(i % 3 === 0 ? 'Disk::Full' : 'Net::Down', `hv-${i % 2}`, i % 8 === 0 ? 'network' : 'storage'),
      occurred_at: new Date(AT.getTime() - (i % 7) * 60_000), count: 1 + (i % 5) }));
    await errors.recordBatch(reports, SAMPLE);
    await db.updateTable('infrastructure_errors').set({ reported: 1 }).where(sql<boolean>`id % 4 = 1`).execute();
    await db.updateTable('error_triage').set({ triage_status: 'resolved' }).where(sql<boolean>`error_id % 5 = 2`).execute();
    const rows = await db.selectFrom('infrastructure_errors').selectAll().execute();
    const seen = await db.selectFrom('error_breakdown').select(['error_id', 'value']).where('dimension', '=', 'component').execute();
    const triage = await db.selectFrom('error_triage').select(['error_id', 'triage_status']).execute();
    const componentOf = new Map(seen.map((row) => [Number(row.error_id), row.value]));
    const statusOf = new Map(triage.map((row) => [Number(row.error_id), row.triage_status]));
    const cases: Array<[Parameters<typeof errors.list>[0], 'updated_at' | 'counter', 'asc' | 'desc']> = [
      [{ component: 'storage', reported: false }, 'updated_at', 'desc'],
      [{ component: 'storage', q: 'disk::' }, 'counter', 'desc'],
      [{ component: 'storage', reported: true, errorClass: 'Net::Down' }, 'updated_at', 'asc'],
      [{ status: 'unresolved', reported: false, q: 'net' }, 'counter', 'asc'],
    ];
    for (const [filters, sort, direction] of cases) {
      const sign = direction === 'asc' ? 1 : -1;
      const expected = rows.filter((row) => (filters.component === undefined || componentOf.get(Number(row.id)) === filters.component)
        && (filters.status === undefined || statusOf.get(Number(row.id)) === filters.status)
        && (filters.reported === undefined || Number(row.reported) === (filters.reported ? 1 : 0))
        && (filters.errorClass === undefined || row.error_class === filters.errorClass)
        && (filters.q === undefined || `${row.error_class} ${row.message}`.toLowerCase().includes(filters.q)))
        .sort((a, b) => sign * (sort === 'counter' ? Number(a.counter) - Number(b.counter) || Number(a.id) - Number(b.id) : a.updated_at.localeCompare(b.updated_at) || Number(a.id) - Number(b.id)))
        .map((row) => Number(row.id));
      for (const offset of [0, 5]) {
        const page = await errors.list(filters, sort, direction, 5, offset);
        assert.deepEqual([page.items.map((item) => item.id), page.total], [expected.slice(offset, offset + 5), expected.length], JSON.stringify({ filters, offset }));
      }
    }
  });

  it('walks the list testing each error when it chose to, even where the planner\'s statistics predate the host\'s errors (PostgreSQL)', { skip: !onPostgres && 'a PostgreSQL plan' }, async () => {
    await migrateToLatest(each.database);
    // The page's statements, kept as compiled for EXPLAIN.
    const pages: RootOperationNode[] = [];
    const keeping: KyselyPlugin = {
      transformQuery: ({ node }) => {
        if (node.kind === 'SelectQueryNode') pages.push(node);
        return node;
      },
      transformResult: ({ result }) => Promise.resolve(result),
    };
    const db = each.database.db.withPlugin(keeping);
    const errors = trackerRepository({ ...each.database, db });
    await errors.recordBatch(Array.from({ length: 400 }, (_, i) => ({ ...reportOf(`Old::E${i % 20}`, `hv-${i % 10}`, 'storage'), occurred_at: new Date(AT.getTime() - 3_600_000) })), SAMPLE);
    await each.database.dialect.statistics.refresh(each.database.db);
    // An incident: 2,000 newer errors on a host the statistics never saw.
    for (let batch = 0; batch < 4; batch++) await errors.recordBatch(Array.from({ length: 500 }, () => reportOf('Incident::Down', 'hv-incident', 'incident')), SAMPLE);
    pages.length = 0;
    const page = await errors.list({ host: 'hv-incident' }, 'updated_at', 'desc', 25, 0);
    assert.equal(page.total, 2000);
    const walk = pages.map((node) => db.getExecutor().compileQuery(node, createQueryId())).find((query) => query.sql.includes('exists'));
    assert.ok(walk, 'the page walks the list');
    const { rows } = await sql.raw<{ 'QUERY PLAN': string }>(`explain analyze ${walk.sql.replace(/\$(\d+)/g, (_, n: string) => sql.lit(walk.parameters[Number(n) - 1]).compile(db).sql)}`).execute(db);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    // The walk down (updated_at, id), each error tested by its breakdown key; not the host's 2,000 errors read and sorted.
    assert.match(plan, /Index Only Scan Backward using infrastructure_errors_updated_at/, plan);
    assert.match(plan, /SubPlan/, plan);
    // The walk read as far as its page, not first as far as its bound (2,000 / 3 entries) to learn where it ends.
    const walked = [...plan.matchAll(/Index Only Scan Backward using infrastructure_errors_updated_at .*actual time=\S+ rows=(\d+)/g)].map((match) => Number(match[1]));
    assert.deepEqual(walked, [25], plan);
  });

  it('reads the page of a host whose errors are all older than the others\' the same whether the bounded walk holds it or the index is read after it', async () => {
    await migrateToLatest(each.database);
    const errors = trackerRepository(each.database);
    // 30 of 70 errors on hv-old, so a page of 2 walks the order (docs/architecture.md#the-page); all
    // older than the other 40, so the walk in updated_at desc meets none of them within its bound.
    const reports = Array.from({ length: 70 }, (_, i) => ({ ...reportOf(i % 2 === 0 ? 'Disk::Full' : 'Net::Down', i < 30 ? 'hv-old' : `hv-${i % 3}`, 'storage'),
      occurred_at: new Date(AT.getTime() + i * 60_000), count: 1 + ((i * 7) % 11) }));
    await errors.recordBatch(reports, SAMPLE);
    const rows = await each.database.db.selectFrom('infrastructure_errors').selectAll().execute();
    const old = rows.filter((row) => reports.findIndex((report) => report.fingerprint === row.fingerprint) < 30);
    for (const [sort, direction] of [['updated_at', 'desc'], ['updated_at', 'asc'], ['counter', 'desc']] as const) {
      const sign = direction === 'asc' ? 1 : -1;
      const expected = [...old].sort((a, b) => sign * (sort === 'counter' ? Number(a.counter) - Number(b.counter) || Number(a.id) - Number(b.id) : a.updated_at.localeCompare(b.updated_at) || Number(a.id) - Number(b.id)))
        .map((row) => Number(row.id));
      for (const offset of [0, 1, 2]) {
        const page = await errors.list({ host: 'hv-old' }, sort, direction, 2, offset);
        assert.deepEqual([page.items.map((item) => item.id), page.total], [expected.slice(offset, offset + 2), 30], JSON.stringify({ sort, direction, offset }));
      }
    }
  });

  it('counts the errors that were there before it', async () => {
    await migrateTo(each.database, '006_error_tracker');
    const errors = trackerRepository(each.database);
    await writeErrorsBeforeTriage(each.database.db, [reportOf('Old::One', 'hv-1', 'storage'), reportOf('Old::One', 'hv-1', null), reportOf('Old::Two', null, 'network')]);
    await migrateToLatest(each.database);
    await assertCountsMatchRows(each.database.db, [
      'all::3', 'component::1', 'component:network:1', 'component:storage:1', 'error_class:Old::One:2', 'error_class:Old::Two:1',
      'host::1', 'host:hv-1:2', 'reported:0:3',
      'error_class.0:Old::One:2', 'error_class.0:Old::Two:1', 'component.0::1', 'component.0:network:1', 'component.0:storage:1', 'host.0::1', 'host.0:hv-1:2',
      'triage.unresolved::3',
    ]);
    await errors.recordBatch([reportOf('Old::Two', 'hv-1', 'network')], SAMPLE);
    await assertCountsMatchRows(each.database.db, [
      'all::4', 'component::1', 'component:network:2', 'component:storage:1', 'error_class:Old::One:2', 'error_class:Old::Two:2',
      'host::1', 'host:hv-1:3', 'reported:0:4',
      'error_class.0:Old::One:2', 'error_class.0:Old::Two:2', 'component.0::1', 'component.0:network:2', 'component.0:storage:1', 'host.0::1', 'host.0:hv-1:3',
      'triage.unresolved::4',
    ]);
  });
});
