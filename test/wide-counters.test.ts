import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { trackerRepository } from '../src/tracker/tracker.store.js';
import { trackerService } from '../src/tracker/tracker.service.js';
import { createTestApp, type TestApp } from './support/app.js';
import { onPostgres } from './support/database.js';
import { call, ERRORS, errorRow, histogramRows, recordOf, report } from './support/error-reports.js';
import { auditTrailOn } from '../src/audit/audit-trail.js';

// Counters are 64-bit on both databases (migration 014_wide_counters), read back
// as JS numbers, and one report that fails its batch fails alone (src/shared/group-commit.ts).

const INT32_MAX = 2 ** 31 - 1;
const fingerprint = () => randomBytes(32).toString('hex');

describe('64-bit counters (docs/operations.md#migrations)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('counts an error past 2^31 - 1: 200 with the exact counter, stored and read back as a number, histogram and breakdown too', async () => {
    const fields = { error_class: 'Storm::Probe', message: 'storm', fingerprint: fingerprint(), host: 'hv-1' };
    const first = await report(t, fields);
    assert.equal(first.statusCode, 201, first.body);
    const { id } = recordOf(first);
    const { db } = t.database;
    // As a storm leaves it: every count of the error at the largest 32-bit integer.
    await db.updateTable('infrastructure_errors').set({ counter: INT32_MAX }).where('id', '=', id).execute();
    await db.updateTable('error_histogram').set({ count: INT32_MAX }).where('error_id', '=', id).execute();
    await db.updateTable('error_breakdown').set({ count: INT32_MAX }).where('error_id', '=', id).execute();

    const next = await report(t, { ...fields, count: 10 });
    assert.equal(next.statusCode, 200, next.body);
    assert.equal(recordOf(next).counter, INT32_MAX + 10);
    assert.equal(Number((await errorRow(t, id))?.counter), INT32_MAX + 10);
    const shown = await call(t, 'GET', `${ERRORS}/${id}.json`);
    assert.equal(shown.statusCode, 200, shown.body);
    assert.equal(recordOf(shown).counter, INT32_MAX + 10);
    assert.deepEqual((await histogramRows(t, id)).map(([, count]) => count), [INT32_MAX + 10]);
    const histogram = await call(t, 'GET', `${ERRORS}/${id}/histogram.json?period=24h`);
    const counted = (JSON.parse(histogram.body) as Array<{ bucket: { count: number } }>).map((b) => b.bucket.count).filter((count) => count > 0);
    assert.deepEqual(counted, [INT32_MAX + 10]);
    const hosts = await db.selectFrom('error_breakdown').select('count').where('error_id', '=', id).where('dimension', '=', 'host').executeTakeFirstOrThrow();
    assert.equal(Number(hosts.count), INT32_MAX + 10);
  });

  it('keeps every count column 64-bit', { skip: !onPostgres && 'SQLite integers are always 64-bit' }, async () => {
    const { rows } = await sql<{ table_name: string; column_name: string; data_type: string }>`
      select table_name, column_name, data_type from information_schema.columns
      where table_schema = current_schema() and (table_name, column_name) in (
        ('infrastructure_errors', 'counter'), ('error_occurrences', 'ordinal'), ('error_occurrences', 'count'),
        ('error_histogram', 'count'), ('error_breakdown', 'count'), ('error_counts', 'errors'),
        ('error_alerts', 'window_count'), ('row_blocks', 'row_count'))
      order by table_name, column_name`.execute(t.database.db);
    assert.deepEqual(rows.map((row) => `${row.table_name}.${row.column_name} ${row.data_type}`), [
      'error_alerts.window_count bigint', 'error_breakdown.count bigint', 'error_counts.errors bigint', 'error_histogram.count bigint',
      'error_occurrences.count bigint', 'error_occurrences.ordinal bigint', 'infrastructure_errors.counter bigint', 'row_blocks.row_count bigint',
    ]);
  });

  it('fails only the bad report of a batch: the others of the same batch are stored and answered', async () => {
    const { db } = t.database;
    const bad = { error_class: 'Overflow::Probe', message: 'overflow', fingerprint: fingerprint() };
    const created = await report(t, bad);
    assert.equal(created.statusCode, 201, created.body);
    const badId = recordOf(created).id;
    if (onPostgres) {
      // Past even 64 bits: the next report of this error cannot be counted.
      await sql`update infrastructure_errors set counter = 9223372036854775807 where id = ${badId}`.execute(db);
    } else {
      // SQLite turns an overflowing integer into a real instead of failing: a trigger fails the report instead.
      await sql`create trigger overflow_probe before update on infrastructure_errors when old.id = ${sql.lit(badId)}
        begin select raise(abort, 'integer out of range'); end`.execute(db);
    }
    const counterBefore = Number((await errorRow(t, badId))?.counter);

    // Submitted in one turn of the event loop: one batch (docs/architecture.md#error-ingestion).
    const tracker = trackerService(trackerRepository(t.database), t.time.clock, auditTrailOn(t.database, t.time.clock, 400), t.config.errors);
    const actor = { id: t.admin.id, permissions: t.admin.permissions };
    const good = [fingerprint(), fingerprint()];
    const answers = await Promise.allSettled([
      tracker.report(actor, { error_class: 'Good::One', message: 'one', fingerprint: good[0] }),
      tracker.report(actor, { ...bad, count: 1 }),
      tracker.report(actor, { error_class: 'Good::Two', message: 'two', fingerprint: good[1] }),
    ]);
    assert.deepEqual(answers.map((answer) => answer.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.match(String((answers[1] as PromiseRejectedResult).reason), /out of range/);
    for (const [i, answer] of [answers[0], answers[2]].entries()) {
      const { record, created: isNew } = (answer as PromiseFulfilledResult<Awaited<ReturnType<typeof tracker.report>>>).value;
      assert.equal(isNew, true);
      assert.equal(record.counter, 1);
      assert.equal(record.fingerprint, good[i]);
    }
    const stored = await db.selectFrom('infrastructure_errors').select(['fingerprint', 'counter']).where('fingerprint', 'in', good).orderBy('error_class').execute();
    assert.deepEqual(stored.map((row) => [row.fingerprint, Number(row.counter)]), good.map((f) => [f, 1]));
    assert.equal(Number((await errorRow(t, badId))?.counter), counterBefore, 'the bad report counted nothing');
    await tracker.drained();
  });
});
