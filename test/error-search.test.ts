import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrateTo, migrateToLatest } from '../src/db/database.js';
import { BACKTRACE_SEARCHED } from '../src/db/migrations/043_error_search_backtrace.js';
import type { ErrorReport } from '../src/tracker/infrastructure-error.js';
import { trackerRepository } from '../src/tracker/tracker.store.js';
import { databasePerTest } from './support/database.js';
import { writeErrorsBeforeTriage } from './support/errors-before-triage.js';

// The list's `q` (a case-insensitive substring of the class, the message or the backtrace's start) answered
// from the text index (migration 008 on SQLite, 009 on PostgreSQL, 043 the backtrace: docs/architecture.md#error-search), held to what
// comparing every error's text answers: counts, pages, few matches and many, after changes.

const SAMPLE = { first: 10, latest: 100 };
const START = Date.parse('2026-11-20T00:00:00.000Z');

function reportOf(i: number, errorClass: string, message: string, fingerprint = randomBytes(32).toString('hex'), backtrace = ''): ErrorReport {
  return { fingerprint, error_class: errorClass, message, backtrace, occurred_at: new Date(START + i * 1000), count: 1, host: null, component: null, request_id: null, context: null };
}

describe('the error list q filter (migrations 008 and 009)', () => {
  const each = databasePerTest();

  /** Every page of `q`, 25 a page, newest first, against the errors whose folded text holds it. */
  async function assertMatchesEveryText(q: string): Promise<number> {
    const errors = trackerRepository(each.database);
    const rows = await each.database.db.selectFrom('infrastructure_errors').select(['id', 'error_class', 'message', 'backtrace', 'updated_at']).execute();
    const folded = q.toLowerCase();
    const expected = rows
      .filter((row) => [row.error_class, row.message, row.backtrace.slice(0, BACKTRACE_SEARCHED)].some((text) => text.toLowerCase().includes(folded)))
      .sort((a, b) => (a.updated_at === b.updated_at ? Number(b.id) - Number(a.id) : a.updated_at < b.updated_at ? 1 : -1))
      .map((row) => Number(row.id));
    const listed: number[] = [];
    for (let offset = 0; offset <= expected.length; offset += 25) {
      const page = await errors.list({ q }, 'updated_at', 'desc', 25, offset);
      assert.equal(page.total, expected.length, `X-Total of q=${q}`);
      listed.push(...page.items.map((item) => item.id));
    }
    assert.deepEqual(listed, expected, `pages of q=${q}`);
    return expected.length;
  }

  it('counts and pages exactly with few matches and with many, in any case, beyond ASCII, with quotes, % and _ and short texts', async () => {
    await migrateToLatest(each.database);
    const errors = trackerRepository(each.database);
    const messages = ['Deadlock detected on pool "ssd-1"', 'DEADLOCK while detaching', 'timeout after 30 s', 'Überlauf im Speicher', '50%_done then stalled'];
    await errors.recordBatch(Array.from({ length: 1200 }, (_, i) => reportOf(i, i % 7 === 0 ? 'Storage::DeadlockError' : 'Net::Timeout', `${messages[i % 5]} #${i}`)), SAMPLE);
    const many = await assertMatchesEveryText('deadlock');
    // Many matches: the first pages walk the list, the later ones read the matches (docs/architecture.md#the-page).
    assert.ok(many > 500, `${many} matches`);
    assert.equal(await assertMatchesEveryText('DeadLock Detected'), 240);
    // Its words each in many errors, never in this order: the index is asked for one word, each error it gives tested for the whole.
    assert.equal(await assertMatchesEveryText('detected deadlock'), 0);
    assert.equal(await assertMatchesEveryText('deadlock while det'), 240);
    assert.equal(await assertMatchesEveryText('"ssd-1"'), 240);
    assert.equal(await assertMatchesEveryText('üBERLAUF'), 240);
    assert.equal(await assertMatchesEveryText('%_d'), 240);
    assert.equal(await assertMatchesEveryText('#1199'), 1);
    assert.equal(await assertMatchesEveryText('#11'), 111);
    assert.equal(await assertMatchesEveryText('ü'), 240);
    assert.equal(await assertMatchesEveryText('nowhere to be found'), 0);
  });

  it("follows an error's text when a later occurrence changes it, and forgets a deleted error", async () => {
    await migrateToLatest(each.database);
    const errors = trackerRepository(each.database);
    const fingerprint = randomBytes(32).toString('hex');
    const [first] = await errors.recordBatch([reportOf(1, 'Volume::Busy', 'volume vol-7 is busy', fingerprint), reportOf(2, 'Other', 'unrelated')], SAMPLE);
    assert.equal(await assertMatchesEveryText('vol-7'), 1);
    await errors.recordBatch([reportOf(3, 'Volume::Busy', 'volume vol-9 is busy', fingerprint)], SAMPLE);
    assert.equal(await assertMatchesEveryText('vol-7'), 0);
    assert.equal(await assertMatchesEveryText('vol-9'), 1);
    assert.equal(await errors.deleteById(first!.record.id), true);
    assert.equal(await assertMatchesEveryText('vol-9'), 0);
    assert.equal(await assertMatchesEveryText('volume::busy'), 0);
    assert.equal(await assertMatchesEveryText('unrelated'), 1);
    // Bulk delete by q deletes what q lists.
    assert.equal(await errors.deleteMatching({ q: 'UNREL' }), 1);
    assert.equal(await assertMatchesEveryText('unrelated'), 0);
  });

  it("finds a text in the backtrace's first 4,096 characters, follows its change, and finds what was there before migration 043", async () => {
    await migrateTo(each.database, '041_log_rules');
    await writeErrorsBeforeTriage(each.database.db, [reportOf(1, 'Old::Error', 'old', undefined, "lib/iscsi.rb:12:in 'iscsi_login'")]);
    await migrateToLatest(each.database);
    const errors = trackerRepository(each.database);
    const fingerprint = randomBytes(32).toString('hex');
    const far = `${'x'.repeat(BACKTRACE_SEARCHED - 5)}far_away_frame`;
    await errors.recordBatch([
      reportOf(2, 'Storage::Error', 'login failed', fingerprint, "src/iscsi.ts:88:in 'ISCSI_LOGIN'"),
      reportOf(3, 'Storage::Error', 'beyond', undefined, far),
      ...Array.from({ length: 60 }, (_, i) => reportOf(10 + i, 'Net::Timeout', `timeout ${i}`, undefined, `src/net.ts:${i}:in 'connect'`)),
    ], SAMPLE);
    assert.equal(await assertMatchesEveryText('iscsi_login'), 2);
    assert.equal(await assertMatchesEveryText('far_away'), 0);
    assert.equal(await assertMatchesEveryText("in 'connect'"), 60);
    await errors.recordBatch([reportOf(100, 'Storage::Error', 'login failed', fingerprint, "src/iscsi.ts:90:in 'iscsi_logout'")], SAMPLE);
    assert.equal(await assertMatchesEveryText('iscsi_login'), 1);
    assert.equal(await assertMatchesEveryText('iscsi_logout'), 1);
  });

  it('finds the errors that were there before it', async () => {
    await migrateTo(each.database, each.database.dialect.name === 'sqlite' ? '007_error_counts' : '008_error_search');
    await writeErrorsBeforeTriage(each.database.db, [reportOf(1, 'Old::Error', 'written before the index'), reportOf(2, 'Old::Error', 'ÄLTER als der Index')]);
    await migrateToLatest(each.database);
    assert.equal(await assertMatchesEveryText('before the'), 1);
    assert.equal(await assertMatchesEveryText('älter'), 1);
    assert.equal(await assertMatchesEveryText('old::'), 2);
  });

  it('is an FTS5 trigram table on SQLite, a table with a pg_trgm GIN index on PostgreSQL', async () => {
    await migrateToLatest(each.database);
    const { db, dialect } = each.database;
    const found = dialect.name === 'sqlite'
      ? await sql<{ text: string }>`select sql as text from sqlite_master where name = 'error_search'`.execute(db)
      : await sql<{ text: string }>`select indexdef as text from pg_indexes where schemaname = current_schema() and tablename = 'error_search' order by indexname`.execute(db);
    assert.deepEqual(found.rows.map((row) => row.text), dialect.name === 'sqlite'
      ? ["CREATE VIRTUAL TABLE error_search using fts5(error_class, message, backtrace, content='', contentless_delete=1, tokenize='trigram case_sensitive 1')"]
      : [
          `CREATE UNIQUE INDEX error_search_pkey ON ${await currentSchema()}.error_search USING btree (id)`,
          `CREATE INDEX error_search_trigrams ON ${await currentSchema()}.error_search USING gin (error_class public.gin_trgm_ops, message public.gin_trgm_ops, backtrace public.gin_trgm_ops)`,
        ]);

    async function currentSchema() {
      return (await sql<{ name: string }>`select current_schema() as name`.execute(db)).rows[0]?.name;
    }
  });
});
