import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { alertRoutingRepository } from '../src/alerts/alert-routing.store.js';
import { loadConfig } from '../src/config.js';
import { migrateTo, openDatabase } from '../src/db/database.js';
import { dialectFor, displayDatabaseUrl } from '../src/db/database-url.js';
import { allMigrations } from '../src/db/migrations/index.js';
import { cmiReleaseVersion } from '../src/version/version.js';
import { runCmi, runProgram, startServer } from './support/cli.js';
import { type FreshDatabase, freshDatabase, onPostgres } from './support/database.js';
import { freePort } from './support/throwaway-postgres.js';

// docs/operations.md#know-what-runs and #cmi-doctor.
const migrationsOf = (url: string) => Object.keys(allMigrations(dialectFor(url)));

function commandExists(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface Check {
  check: string;
  state: string;
  message: string;
  fix: string | null;
}

const doctorJson = async (env: Record<string, string>) => {
  const run = await runCmi(['doctor', '--json'], env);
  assert.equal(run.stderr, '');
  return { code: run.code, report: JSON.parse(run.stdout) as { ok: boolean; checks: Check[] } };
};
const states = (checks: Check[]) => checks.map(({ check, state }) => `${check} ${state}`);

describe('cmi version --local and cmi doctor', { timeout: 600_000 }, () => {
  let fresh: FreshDatabase;
  let older: FreshDatabase;
  let latest: string;
  let env: Record<string, string>;
  before(async () => {
    fresh = await freshDatabase();
    older = await freshDatabase();
    env = { DATABASE_URL: fresh.url, CMI_ALERT_WEBHOOK_URL: '', CMI_REPORT_WEBHOOK_URL: '', CMI_ONAPP_VERSION: '' };
    const migrated = await runCmi(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    latest = migrationsOf(fresh.url).at(-1) as string;
    // A database an older cmi left: every migration but the last.
    const database = openDatabase(loadConfig({ DATABASE_URL: older.url }));
    await migrateTo(database, migrationsOf(older.url).at(-2) as string);
    await database.close();
  });
  after(async () => {
    await fresh.drop();
    await older.drop();
  });

  it('version --local: cmi, the OnApp version reported, node and the database\'s schema, without a server', async () => {
    const run = await runCmi(['version', '--local'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, [
      `cmi ${cmiReleaseVersion()}`,
      'OnApp version reported 6.7 (CMI_ONAPP_VERSION)',
      `node ${process.version}`,
      `database ${displayDatabaseUrl(fresh.url)}: schema ${latest}, up to date`,
      '',
    ].join('\n'));
    const json = await runCmi(['version', '--local', '--json'], { ...env, CMI_ONAPP_VERSION: '5.10' });
    assert.equal(json.stdout, `${JSON.stringify({
      cmi: cmiReleaseVersion(),
      onapp_version: '5.10',
      node: process.version,
      database: displayDatabaseUrl(fresh.url),
      schema_version: latest,
      schema_latest: latest,
      migrations_pending: [],
      database_problem: null,
    })}\n`);
  });

  it('version --local on a database an older cmi left names the migrations pending; on one that cannot be reached, why', async () => {
    const pending = await runCmi(['version', '--local'], { ...env, DATABASE_URL: older.url });
    assert.equal(pending.code, 0, pending.stderr);
    assert.equal(pending.stdout.split('\n')[3], `database ${displayDatabaseUrl(older.url)}: schema ${migrationsOf(older.url).at(-2)}, 1 migration pending (cmi migrate): ${latest}`);
    const port = await freePort();
    const gone = await runCmi(['version', '--local', '--json'], { ...env, DATABASE_URL: `postgres://cmi:secret-pw@127.0.0.1:${port}/cmi` });
    assert.equal(gone.code, 0, gone.stderr);
    const answer = JSON.parse(gone.stdout) as Record<string, unknown>;
    assert.equal(answer.schema_version, null);
    assert.equal(answer.database, `postgres://cmi:***@127.0.0.1:${port}/cmi`);
    assert.equal(answer.database_problem, `cannot connect to PostgreSQL at 127.0.0.1:${port}: connection refused; check that PostgreSQL is running and listens on 127.0.0.1:${port} (the host and port of DATABASE_URL)`);
    assert.ok(!gone.stdout.includes('secret-pw'));
    // libpq's password parameter (which pg reads too) is masked as the URL's own is.
    const inQuery = await runCmi(['version', '--local', '--json'], { ...env, DATABASE_URL: `postgres://cmi@127.0.0.1:${port}/cmi?sslmode=disable&password=query-pw` });
    assert.equal(inQuery.code, 0, inQuery.stderr);
    assert.equal((JSON.parse(inQuery.stdout) as Record<string, unknown>).database, `postgres://cmi@127.0.0.1:${port}/cmi?sslmode=disable&password=***`);
    assert.ok(!inQuery.stdout.includes('query-pw'));
  });

  it('doctor: every check passes on a migrated database: one line each, exit 0', async () => {
    const run = await runCmi(['doctor'], env);
    assert.equal(run.code, 0, run.stdout);
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines[0], `ok   configuration: every setting is valid; DATABASE_URL ${displayDatabaseUrl(fresh.url)}`);
    assert.equal(lines[1], `ok   database: ${displayDatabaseUrl(fresh.url)} answers`);
    assert.equal(lines[2], `ok   schema: schema ${latest}, up to date`);
    // SQLite: the disk of its file; PostgreSQL: the clock against the server's.
    assert.match(lines[3] as string, onPostgres ? /^ok {3}clock: this machine's clock is \d+ ms (behind|ahead of) the database's \(round trip \d+ ms\)$/ : /^ok {3}disk: \d+ MiB free of \d+ MiB under \//);
    assert.equal(lines[4], 'ok   webhooks: none configured (CMI_ALERT_WEBHOOK_URL, CMI_REPORT_WEBHOOK_URL)');
    assert.equal(lines.length, 5);
    const { code, report } = await doctorJson(env);
    assert.equal(code, 0);
    assert.equal(report.ok, true);
    assert.deepEqual(states(report.checks), ['configuration ok', 'database ok', 'schema ok', onPostgres ? 'clock ok' : 'disk ok', 'webhooks ok']);
    assert.ok(report.checks.every((check) => check.fix === null));
  });

  it('doctor: a webhook destination that refuses connections fails, named by its origin only (its path may hold a token), exit 1', async () => {
    const listening: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    const open = (listening.address() as { port: number }).port;
    const closed = await freePort();
    try {
      const run = await runCmi(['doctor'], {
        ...env,
        CMI_ALERT_WEBHOOK_URL: `http://127.0.0.1:${closed}/hooks/T000/secret-token`,
        CMI_REPORT_WEBHOOK_URL: `http://127.0.0.1:${open}/report?key=another-secret`,
        CMI_WEBHOOK_SECRET: 'a-webhook-secret-0123',
      });
      assert.equal(run.code, 1);
      const lines = run.stdout.trimEnd().split('\n');
      assert.deepEqual(lines.slice(-2), [
        `fail webhooks: CMI_ALERT_WEBHOOK_URL: http://127.0.0.1:${closed}: connection refused; fix: check that the receiver runs and that this machine may reach it (firewall, proxy); deliveries are retried meanwhile (docs/reporting-and-alerts.md#the-outbox)`,
        `ok   webhooks: CMI_REPORT_WEBHOOK_URL: http://127.0.0.1:${open} accepts connections`,
      ]);
      assert.ok(!run.stdout.includes('secret'));
    } finally {
      listening.close();
    }
  });

  it('doctor: the enabled alert destinations are checked too, a Slack URL by its origin, a mail destination by its SMTP server; a disabled one is not', async () => {
    const smtp: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const smtpPort = (smtp.address() as { port: number }).port;
    const closed = await freePort();
    const database = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
    const routing = alertRoutingRepository(database);
    const base = { secret: null, smtp_host: null, smtp_port: null, smtp_security: null, smtp_user: null, smtp_password: null, from: null, to: [] as string[], enabled: true };
    const now = new Date();
    const created = [
      await routing.createDestination({ ...base, label: 'Storage chat', kind: 'slack', url: `http://127.0.0.1:${closed}/services/T0/B0/slack-secret-path` }, now),
      await routing.createDestination({ ...base, label: 'Billing mail', kind: 'email', url: null, smtp_host: '127.0.0.1', smtp_port: smtpPort, smtp_security: 'none', from: 'cmi@example.com', to: ['billing@example.com'] }, now),
      await routing.createDestination({ ...base, label: 'Old hook', kind: 'webhook', url: `http://127.0.0.1:${closed}/old`, enabled: false }, now),
    ];
    try {
      const run = await runCmi(['doctor'], env);
      assert.equal(run.code, 1);
      assert.deepEqual(run.stdout.trimEnd().split('\n').filter((line) => line.includes('webhooks:')), [
        `fail webhooks: alert destination ${created[0]!.id} (slack): http://127.0.0.1:${closed}: connection refused; fix: check that the receiver runs and that this machine may reach it (firewall, proxy); deliveries are retried meanwhile (docs/reporting-and-alerts.md#the-outbox)`,
        `ok   webhooks: alert destination ${created[1]!.id} (email): smtp://127.0.0.1:${smtpPort} accepts connections`,
      ]);
      assert.ok(!run.stdout.includes('slack-secret-path'), 'the Slack URL is shown by its origin');
    } finally {
      for (const destination of created) await routing.removeDestination(destination.id, now);
      await database.close();
      smtp.close();
    }
  });

  it('doctor: migrations pending are a warning (serve applies them), exit 0', async () => {
    const { code, report } = await doctorJson({ ...env, DATABASE_URL: older.url });
    assert.equal(code, 0);
    assert.equal(report.ok, true);
    assert.deepEqual(report.checks[2], {
      check: 'schema',
      state: 'warn',
      message: `schema ${migrationsOf(older.url).at(-2)}, 1 migration of this cmi pending: ${latest}`,
      fix: 'cmi migrate (cmi serve also applies them when it starts; docs/operations.md#upgrades-and-migrations)',
    });
  });

  it('doctor: a database that cannot be reached fails with where, why and what to check; a bad setting stops at the configuration', async () => {
    const port = await freePort();
    const { code, report } = await doctorJson({ ...env, DATABASE_URL: `postgres://cmi:secret-pw@127.0.0.1:${port}/cmi` });
    assert.equal(code, 1);
    assert.equal(report.ok, false);
    assert.deepEqual(report.checks.slice(1), [
      { check: 'database', state: 'fail', message: `cannot connect to PostgreSQL at 127.0.0.1:${port}: connection refused`, fix: `check that PostgreSQL is running and listens on 127.0.0.1:${port} (the host and port of DATABASE_URL)` },
      { check: 'webhooks', state: 'ok', message: 'none configured (CMI_ALERT_WEBHOOK_URL, CMI_REPORT_WEBHOOK_URL)', fix: null },
    ]);
    const bad = await runCmi(['doctor'], { ...env, PORT: 'abc' });
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, 'fail configuration: PORT must be an integer from 0 to 65535 (got "abc"); fix: correct that setting in the environment (or /etc/cmi/cmi.env); see docs/operations.md#configuration\n');
    const missing = join(mkdtempSync(join(tmpdir(), 'cmi-doctor-')), 'none.sqlite3');
    const none = await doctorJson({ ...env, DATABASE_URL: `sqlite:${missing}` });
    assert.equal(none.code, 1);
    assert.deepEqual(none.report.checks[1], { check: 'database', state: 'fail', message: `no database at ${missing}`, fix: 'point DATABASE_URL at the database, or create this one with cmi migrate' });
  });

  it('serve --log-format json: every start-up and stop line is one JSON object of the same shape, fastify\'s own listening line included', async () => {
    const own = await freshDatabase();
    const server = await startServer({ ...env, DATABASE_URL: own.url, LOG_LEVEL: 'info', CMI_ADMIN_PASSWORD: 'admin-password' }, ['--log-format', 'json']);
    assert.equal(await server.stop(), 0);
    const lines = server.output.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(lines.map((line) => Object.keys(line)), lines.map(() => ['time', 'level', 'pid', 'msg']));
    assert.deepEqual(lines.map((line) => line.msg), [
      `cmi listening on ${server.baseUrl} (${displayDatabaseUrl(own.url)})`,
      'Created administrator "admin" with the password from CMI_ADMIN_PASSWORD.',
      `Try: curl -u 'admin:<password>' ${server.baseUrl}/version.json`,
      'SIGTERM: finishing requests in flight, then stopping',
    ]);
    assert.equal(server.errors, '');
    await own.drop();
  });

  // A disk nearly full, for real: a 20 MiB tmpfs (mounting needs root).
  const canMount = process.getuid?.() === 0 && commandExists('mount');
  it('doctor: a SQLite database on a disk with less than 100 MiB free fails the disk check', { skip: (!canMount && 'needs root to mount a small tmpfs') || (onPostgres && 'the disk check is SQLite\'s') }, async () => {
    const mountPoint = mkdtempSync(join(tmpdir(), 'cmi-small-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', mountPoint]);
    try {
      mkdirSync(join(mountPoint, 'db'));
      const url = `sqlite:${join(mountPoint, 'db', 'cmi.sqlite3')}`;
      assert.equal((await runCmi(['migrate'], { ...env, DATABASE_URL: url })).code, 0);
      const { code, report } = await doctorJson({ ...env, DATABASE_URL: url });
      assert.equal(code, 1);
      const disk = report.checks.find((check) => check.check === 'disk');
      assert.equal(disk?.state, 'fail');
      assert.match(disk?.message ?? '', new RegExp(`^1\\d MiB free of 20 MiB under ${join(mountPoint, 'db')}$`));
      assert.equal(disk?.fix, 'free space on that disk, or move the database to a larger one (cmi backup, then cmi restore there); a full disk makes every write answer 503');
    } finally {
      execFileSync('umount', [mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    }
  });

  // A clock two minutes ahead, for real: Debian's faketime runs cmi with a shifted clock.
  it('doctor: a clock 2 minutes off PostgreSQL\'s fails the clock check', { skip: (!onPostgres && 'the clock check is PostgreSQL\'s') || (!commandExists('faketime') && 'needs faketime (Debian package faketime)') }, async () => {
    const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
    const run = await runProgram('faketime', ['-f', '+120s', process.execPath, '--import', import.meta.resolve('tsx'), main, 'doctor', '--json'], {
      env: { ...process.env, ...env, FAKETIME_DONT_FAKE_MONOTONIC: '1' },
    });
    assert.equal(run.code, 1, run.stderr);
    const clock = (JSON.parse(run.stdout) as { checks: Check[] }).checks.find((check) => check.check === 'clock');
    assert.equal(clock?.state, 'fail');
    assert.match(clock?.message ?? '', /^this machine's clock is 1(19|20)\d{3} ms ahead of the database's \(round trip \d+ ms\)$/);
  });
});
