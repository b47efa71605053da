import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { type Database, migrateToLatest, openDatabase } from '../src/db/database.js';
import type { ErrorReport } from '../src/tracker/infrastructure-error.js';
import { trackerRepository } from '../src/tracker/tracker.store.js';
import { runCmi } from './support/cli.js';
import { type FreshDatabase, freshDatabase } from './support/database.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const DAY = 24 * HOUR;
/** The wire form of a datetime (docs/api.md#datetimes), written out here rather than taken from src/. */
const wire = (at: Date) => `${at.toISOString().slice(0, 19)}+00:00`;

const BACKTRACE = "src/store/users.ts:42:in 'findUser'\nsrc/server/routes/users.ts:18:in 'list'";
const FP = { type: 'a'.repeat(64), range: 'b'.repeat(64), parse: 'c'.repeat(64), old: 'd'.repeat(64) };
const LONG_MESSAGE = 'Connection to db-7.internal:5432 refused after 3 attempts; giving up on the primary and failing over';

/**
 * `cmi local errors ...` on a fresh database of its own, seeded through the repository with four errors:
 * 1 TypeError (19 occurrences on 13 hosts, the latest seen), 2 RangeError (a long message, and an
 * occurrence 40 days ago), 3 TypeError (marked reported), 4 OldError (made stale for prune). Each command
 * starts a process, so independent ones run side by side; the tests build on each other in order.
 */
describe('cmi local errors', () => {
  let fresh: FreshDatabase;
  let env: Record<string, string>;
  let database: Database;
  // Whole minutes, a few hours back: every time below is exact in the wire form.
  const base = new Date(Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR);
  const at = (ms: number) => new Date(base.getTime() + ms);
  const fortyDaysAgo = new Date(base.getTime() - 40 * DAY);

  const report = (fields: Partial<ErrorReport> & Pick<ErrorReport, 'fingerprint' | 'error_class' | 'occurred_at'>): ErrorReport => ({
    message: '', backtrace: '', count: 1, host: null, component: null, request_id: null, context: null, ...fields,
  });

  before(async () => {
    fresh = await freshDatabase();
    env = { DATABASE_URL: fresh.url, CMI_ADMIN_PASSWORD: '', LOG_LEVEL: 'warn' };
    database = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
    await migrateToLatest(database);
    const repository = trackerRepository(database);
    const sample = { first: 10, latest: 100 };
    const type = { fingerprint: FP.type, error_class: 'TypeError', message: "Cannot read properties of undefined (reading 'id')\nwhile listing users", backtrace: BACKTRACE };
    await repository.recordBatch([
      report({ ...type, occurred_at: at(0), host: 'web-1', component: 'api', request_id: 'req-0', count: 5 }),
      report({ ...type, occurred_at: at(MINUTE), host: 'web-2', component: 'api', request_id: 'req-1', count: 3 }),
      ...Array.from({ length: 10 }, (_, i) =>
        report({ ...type, occurred_at: at((i + 2) * MINUTE), host: `h${String(i + 1).padStart(2, '0')}`, component: 'worker', request_id: `req-${i + 2}` })),
      report({ ...type, occurred_at: at(12 * MINUTE) }),
    ], sample);
    await repository.recordBatch([
      report({ fingerprint: FP.range, error_class: 'RangeError', message: LONG_MESSAGE, occurred_at: fortyDaysAgo, host: 'web-1' }),
      report({ fingerprint: FP.range, error_class: 'RangeError', message: LONG_MESSAGE, occurred_at: at(-HOUR), host: 'web-1' }),
    ], sample);
    await repository.recordBatch([
      report({ fingerprint: FP.parse, error_class: 'TypeError', message: 'Unexpected token\nin JSON at position 0', occurred_at: at(-2 * HOUR) }),
    ], sample);
    await repository.recordBatch([report({ fingerprint: FP.old, error_class: 'OldError', message: 'gone', occurred_at: at(-3 * HOUR), host: 'web-9' })], sample);
    // No endpoint marks an error reported yet (docs/api.md#infrastructure-errors): the database does.
    await database.db.updateTable('infrastructure_errors').set({ reported: 1 }).where('id', '=', 3).execute();
  });
  after(async () => {
    await database?.close();
    await fresh?.drop();
  });

  /** Runs a command that must succeed and print exactly `stdout`. */
  async function succeeds(args: string[], stdout: string, extraEnv: Record<string, string> = {}): Promise<void> {
    const res = await runCmi(['local', 'errors', ...args], { ...env, ...extraEnv });
    assert.equal(res.stderr, '', `${args.join(' ')}: ${res.stderr}`);
    assert.equal(res.code, 0);
    assert.equal(res.stdout, stdout, args.join(' '));
  }

  /** Runs a command that must fail with exit code `code` (1: refused, 2: a usage mistake), print nothing, and say exactly `stderr` (or match it). */
  async function fails(args: string[], stderr: string | RegExp, code = 1): Promise<void> {
    const res = await runCmi(['local', 'errors', ...args], env);
    if (typeof stderr === 'string') assert.equal(res.stderr, stderr, args.join(' '));
    else assert.match(res.stderr, stderr);
    assert.equal(res.stdout, '', args.join(' '));
    assert.equal(res.code, code, args.join(' '));
  }

  const HEADER = 'ID  COUNT  LAST SEEN                  REPORTED  CLASS       MESSAGE\n';
  const ROW = {
    1: `1   19     ${wire(at(12 * MINUTE))}  no        TypeError   Cannot read properties of undefined (reading 'id')\n`,
    // The message's first 59 characters and an ellipsis: 60 in all.
    2: `2   2      ${wire(at(-HOUR))}  no        RangeError  Connection to db-7.internal:5432 refused after 3 attempts; …\n`,
    3: `3   1      ${wire(at(-2 * HOUR))}  yes       TypeError   Unexpected token\n`,
    4: `4   1      ${wire(at(-3 * HOUR))}  no        OldError    gone\n`,
  };

  const record = (id: number, fields: Record<string, unknown>) => ({ infrastructure_error: { id, ...fields } });
  const RECORD_1 = record(1, {
    backtrace: BACKTRACE,
    counter: 19,
    created_at: wire(base),
    error_class: 'TypeError',
    fingerprint: FP.type,
    message: "Cannot read properties of undefined (reading 'id')\nwhile listing users",
    reported: false,
    updated_at: wire(at(12 * MINUTE)),
  });
  const RECORD_3 = record(3, {
    backtrace: '',
    counter: 1,
    created_at: wire(at(-2 * HOUR)),
    error_class: 'TypeError',
    fingerprint: FP.parse,
    message: 'Unexpected token\nin JSON at position 0',
    reported: true,
    updated_at: wire(at(-2 * HOUR)),
  });

  // Each command costs a process (about a second of CPU): the cases below are chosen to keep the file short.
  it('local errors --help lists the five commands', async () => {
    const help = await runCmi(['local', 'errors', '--help'], env);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: cmi local errors \[options\] \[command\]\n/);
    for (const command of [/^ {2}ls \[options\] +list errors, the latest seen first$/m, /^ {2}show \[options\] <id> +print an error/m, /^ {2}report <id> +mark an error reported/m, /^ {2}rm <id> +delete an error/m, /^ {2}prune +remove errors not seen/m]) {
      assert.match(help.stdout, command);
    }
  });

  /** Without a RangeError row the CLASS column is one character narrower. */
  const narrow = (rows: string) =>
    'ID  COUNT  LAST SEEN                  REPORTED  CLASS      MESSAGE\n' + rows.replace(/( {2}(?:TypeError|OldError) +)/g, (cell) => cell.slice(0, -1));

  it('ls prints a table, the latest seen first, and a count; paged', async () => {
    await Promise.all([
      succeeds(['ls'], HEADER + ROW[1] + ROW[2] + ROW[3] + ROW[4] + '4 of 4 errors (page 1)\n'),
      succeeds(['ls', '--page', '2', '--per-page', '2'], narrow(ROW[3] + ROW[4]) + '2 of 4 errors (page 2)\n'),
    ]);
  });

  it('ls filters by --reported, --unreported, --class and --since (the API\'s filters)', async () => {
    await Promise.all([
      succeeds(['ls', '--reported'], narrow(ROW[3]) + '1 of 1 errors (page 1)\n'),
      succeeds(['ls', '--unreported'], HEADER + ROW[1] + ROW[2] + ROW[4] + '3 of 3 errors (page 1)\n'),
      succeeds(['ls', '--class', 'TypeError', '--per-page', '1'], narrow(ROW[1]) + '1 of 2 errors (page 1)\n'),
      // Exactly the last seen time of error 2 is included.
      succeeds(['ls', '--since', wire(at(-HOUR))], HEADER + ROW[1] + ROW[2] + '2 of 2 errors (page 1)\n'),
    ]);
  });

  it('ls --json prints the array the API answers, filters applied', async () => {
    await succeeds(['ls', '--class', 'TypeError', '--json'], `${JSON.stringify([RECORD_1, RECORD_3])}\n`);
  });

  it('ls refuses bad values in one line each: exit 1 and the API\'s words for the query, exit 2 and commander\'s for the options', async () => {
    await Promise.all([
      fails(['ls', '--since', 'yesterday', '--class', ''], 'cmi: error_class must be 1 to 255 characters\ncmi: since must be a datetime such as 2026-11-20T10:00:00+00:00\n'),
      fails(['ls', '--page', '0'], 'cmi: --page and --per-page must be positive integers\n', 2),
      fails(['ls', '--reported', '--unreported'], /^error: option '--reported' cannot be used with option '--unreported'\n/, 2),
    ]);
  });

  it('show prints the nine fields, the backtrace indented, the latest 5 occurrences and the top 10 hosts', async () => {
    const occurrence = (minute: number, host: string, component: string, request: string) =>
      `  ${wire(at(minute * MINUTE))}  ${host.padEnd(4)}  ${component.padEnd(9)}  ${request}`.trimEnd();
    await succeeds(['show', '1'], [
      'id: 1',
      'backtrace:',
      "    src/store/users.ts:42:in 'findUser'",
      "    src/server/routes/users.ts:18:in 'list'",
      'counter: 19',
      `created_at: ${wire(base)}`,
      'error_class: TypeError',
      `fingerprint: ${FP.type}`,
      "message: Cannot read properties of undefined (reading 'id')",
      '    while listing users',
      'reported: false',
      `updated_at: ${wire(at(12 * MINUTE))}`,
      '',
      'Latest occurrences (5 of 13 kept):',
      '  OCCURRED AT                HOST  COMPONENT  REQUEST ID',
      occurrence(12, '-', '-', '-'),
      occurrence(11, 'h10', 'worker', 'req-11'),
      occurrence(10, 'h09', 'worker', 'req-10'),
      occurrence(9, 'h08', 'worker', 'req-9'),
      occurrence(8, 'h07', 'worker', 'req-8'),
      '',
      'By host (10 of 13):',
      '  HOST   COUNT',
      '  web-1  5',
      '  web-2  3',
      '  -      1',
      ...Array.from({ length: 7 }, (_, i) => `  h0${i + 1}    1`),
      '',
    ].join('\n'));
  });

  it('show of an error without a backtrace or hosts, and show --json: the record the API answers', async () => {
    await Promise.all([
      succeeds(['show', '3'], [
        'id: 3',
        'backtrace: (none)',
        'counter: 1',
        `created_at: ${wire(at(-2 * HOUR))}`,
        'error_class: TypeError',
        `fingerprint: ${FP.parse}`,
        'message: Unexpected token',
        '    in JSON at position 0',
        'reported: true',
        `updated_at: ${wire(at(-2 * HOUR))}`,
        '',
        'Latest occurrences (1 of 1 kept):',
        '  OCCURRED AT                HOST  COMPONENT  REQUEST ID',
        `  ${wire(at(-2 * HOUR))}  -     -          -`,
        '',
        'By host (1 of 1):',
        '  HOST  COUNT',
        '  -     1',
        '',
      ].join('\n')),
      succeeds(['show', '1', '--json'], `${JSON.stringify(RECORD_1)}\n`),
    ]);
  });

  it('show and rm of an unknown id: one line, exit 1, nothing deleted', async () => {
    await Promise.all([
      fails(['show', '99'], 'cmi: no infrastructure error 99\n'),
      fails(['show', 'abc'], 'cmi: no infrastructure error abc\n'),
      fails(['rm', '99'], 'cmi: no infrastructure error 99\n'),
    ]);
    const ids = await database.db.selectFrom('infrastructure_errors').select('id').orderBy('id').execute();
    assert.deepEqual(ids.map((row) => Number(row.id)), [1, 2, 3, 4]);
  });

  const rowsOf = async (table: 'error_occurrences' | 'error_histogram' | 'error_breakdown', errorId: number) =>
    (await database.db.selectFrom(table).select('error_id').where('error_id', '=', errorId).execute()).length;

  it('rm removes the error and everything kept about it; a second rm finds nothing', async () => {
    assert.equal(await rowsOf('error_occurrences', 3), 1);
    await succeeds(['rm', '3'], 'Deleted infrastructure error 3 (TypeError: Unexpected token)\n');
    assert.equal(await database.db.selectFrom('infrastructure_errors').select('id').where('id', '=', 3).executeTakeFirst(), undefined);
    assert.equal(await rowsOf('error_occurrences', 3), 0);
    assert.equal(await rowsOf('error_histogram', 3), 0);
    assert.equal(await rowsOf('error_breakdown', 3), 0);
    await fails(['rm', '3'], 'cmi: no infrastructure error 3\n');
  });

  it('prune removes only errors not seen for the retention period, and hourly counts older than 31 days', async () => {
    const hoursOf = async (errorId: number) =>
      (await database.db.selectFrom('error_histogram').select('hour').where('error_id', '=', errorId).orderBy('hour').execute()).map((row) => Number(row.hour));
    const hour = (when: Date) => Math.floor(when.getTime() / HOUR);
    assert.deepEqual(await hoursOf(2), [hour(fortyDaysAgo), hour(at(-HOUR))]);

    // Error 4 last seen 91 days ago; 2 and 1 within the default 90 days.
    const longAgo = new Date(Date.now() - 91 * DAY).toISOString();
    await database.db.updateTable('infrastructure_errors').set({ created_at: longAgo, updated_at: longAgo }).where('id', '=', 4).execute();
    await succeeds(['prune'], 'Removed 1 error not seen for 90 days and 1 hourly count older than 31 days\n');
    const ids = await database.db.selectFrom('infrastructure_errors').select('id').orderBy('id').execute();
    assert.deepEqual(ids.map((row) => Number(row.id)), [1, 2]);
    assert.equal(await rowsOf('error_occurrences', 4), 0);
    assert.equal(await rowsOf('error_histogram', 4), 0);
    assert.equal(await rowsOf('error_breakdown', 4), 0);
    // Error 2 stays, without its 40-day-old hour; its occurrences are not the histogram's and stay.
    assert.deepEqual(await hoursOf(2), [hour(at(-HOUR))]);
    assert.equal(await rowsOf('error_occurrences', 2), 2);
    assert.deepEqual(await hoursOf(1), [hour(base)]);

    // The period is CMI_ERRORS_RETENTION_DAYS: error 2, last seen 2 days ago, is stale after 1 day, error 1 is not.
    const twoDaysAgo = new Date(Date.now() - 2 * DAY).toISOString();
    await database.db.updateTable('infrastructure_errors').set({ updated_at: twoDaysAgo }).where('id', '=', 2).execute();
    await succeeds(['prune'], 'Removed 1 error not seen for 1 day and 0 hourly counts older than 31 days\n', { CMI_ERRORS_RETENTION_DAYS: '1' });
    const left = await database.db.selectFrom('infrastructure_errors').select('id').execute();
    assert.deepEqual(left.map((row) => Number(row.id)), [1]);
    assert.equal(await rowsOf('error_occurrences', 2), 0);
  });
});
