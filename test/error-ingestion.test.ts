import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { sql } from 'kysely';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { trackerService } from '../src/tracker/tracker.service.js';
import { retentionJob } from '../src/tracker/retention.js';
import { type Database, openDatabase } from '../src/db/database.js';
import { trackerRepository } from '../src/tracker/tracker.store.js';
import { settingsRepository } from '../src/db/settings.store.js';
import { createTestApp, type TestApp } from './support/app.js';
import { type RunningServer, startServer } from './support/cli.js';
import { type FreshDatabase, freshDatabase } from './support/database.js';
import { eventually } from './support/eventually.js';
import { type Answer, type LoadClient, loadClient } from '../tools/shared/report-load.js';
import { auditTrailOn } from '../src/audit/audit-trail.js';

// Error counting is exact, durable and storm-proof (docs/architecture.md#error-ingestion,
// docs/operations.md#faults-of-cmi, docs/operations.md#retention), shown on real `cmi serve` processes.

const BASE = '/sysadmin_tools/infrastructure/errors';
const PASSWORD = 'admin-password';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const STORM_BACKTRACE = ["src/hypervisor/pool.ts:88:in 'allocate'", "src/server/routes/machines.ts:31:in 'create'"];
const HOUR_MS = 3_600_000;

interface Recorded {
  id: number;
  counter: number;
  error_class: string;
}

const recordOf = (answer: Answer): Recorded => (JSON.parse(answer.body) as { infrastructure_error: Recorded }).infrastructure_error;

/**
 * The transactions a set of answers to reports of one error reveals. Each answer carries the record
 * as its batch's commit left it, so the reports of one transaction share one counter, and the
 * transactions, serialized on the record, leave distinct counters. Exact counting means: each
 * counter value is answered exactly as many times as that transaction added (its distance from the
 * previous value). Answers, in commit order, each transaction's first and last ordinal.
 */
function transactionsOf(counters: readonly number[]): Array<{ from: number; to: number }> {
  const answered = new Map<number, number>();
  for (const counter of counters) answered.set(counter, (answered.get(counter) ?? 0) + 1);
  const values = [...answered.keys()].sort((a, b) => a - b);
  let previous = 0;
  return values.map((value) => {
    assert.equal(answered.get(value), value - previous, `answers with counter ${value}: as many as the reports its transaction added after ${previous}`);
    const transaction = { from: previous + 1, to: value };
    previous = value;
    return transaction;
  });
}

/** The exit of a child, whether it already happened or not. */
async function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  return { code: child.exitCode, signal: child.signalCode };
}

describe('error ingestion on real cmi serve processes', { timeout: 600_000 }, () => {
  const started: RunningServer[] = [];
  const databases: FreshDatabase[] = [];
  const directories: string[] = [];
  const clients: LoadClient[] = [];

  const database = async () => {
    const fresh = await freshDatabase();
    databases.push(fresh);
    return fresh;
  };
  const spoolDirectory = () => {
    const directory = mkdtempSync(join(tmpdir(), 'cmi-spool-'));
    directories.push(directory);
    return directory;
  };
  /** `cmi serve` on `fresh`; every server started is stopped after the suite, even when a test fails. */
  const serve = async (fresh: FreshDatabase, spool: string, env: Record<string, string> = {}) => {
    const server = await startServer({
      DATABASE_URL: fresh.url,
      CMI_ADMIN_PASSWORD: PASSWORD,
      CMI_SPOOL_DIR: spool,
      CMI_ERRORS_RATE_LIMIT: '1000000',
      ...env,
    });
    started.push(server);
    return server;
  };
  const client = (server: RunningServer, sockets: number) => {
    const load = loadClient(server.baseUrl, AUTH, sockets);
    clients.push(load);
    return load;
  };
  /** The database's rows, read on a connection of the test's own (the servers are separate processes). */
  const readRows = async <T>(fresh: FreshDatabase, read: (handle: Database) => Promise<T>): Promise<T> => {
    const handle = openDatabase(loadConfig({ DATABASE_URL: fresh.url, LOG_LEVEL: 'silent' }));
    try {
      return await read(handle);
    } finally {
      await handle.close();
    }
  };
  const countersByClass = (fresh: FreshDatabase) =>
    readRows(fresh, async ({ db }) => {
      const rows = await db.selectFrom('infrastructure_errors').select(['error_class', 'counter']).execute();
      return new Map(rows.map((row) => [row.error_class, Number(row.counter)]));
    });
  const getJson = async <T>(load: LoadClient, path: string): Promise<{ answer: Answer; body: T }> => {
    const answer = await load.get(path);
    assert.equal(answer.status, 200, `GET ${path}: ${answer.body}`);
    return { answer, body: JSON.parse(answer.body) as T };
  };

  after(async () => {
    for (const load of clients) load.close();
    for (const server of started) {
      if (server.child.exitCode !== null || server.child.signalCode !== null) continue;
      // A server a failed test left in a bad state must not keep the test process waiting.
      const kill = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
      await server.stop();
      clearTimeout(kill);
    }
    for (const fresh of databases) await fresh.drop();
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  });

  describe('two processes on one database', () => {
    let fresh: FreshDatabase;
    let servers: RunningServer[];
    before(async () => {
      fresh = await database();
      const spool = spoolDirectory();
      servers = [await serve(fresh, spool), await serve(fresh, spool)];
    });

    it('count one error reported 2,000 times by 20 clients exactly: counter, histogram, breakdown, kept occurrences', async () => {
      const CLIENTS = 20;
      const PER_CLIENT = 100;
      const TOTAL = CLIENTS * PER_CLIENT;
      const via = servers.map((server) => client(server, CLIENTS / 2));
      const answers: Array<{ requestId: string; status: number; record: Recorded }> = [];
      await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = 0; i < PER_CLIENT; i++) {
          const requestId = `c${c}-r${i}`;
          const answer = await (via[c % 2] as LoadClient).post(`${BASE}.json`, {
            infrastructure_error: {
              error_class: 'StormError',
              message: 'pool exhausted',
              backtrace: STORM_BACKTRACE,
              host: `host-${c % 4}`,
              component: `via-server-${c % 2}`,
              request_id: requestId,
            },
          });
          assert.ok(answer.status === 200 || answer.status === 201, `report ${requestId}: ${answer.status} ${answer.body}`);
          answers.push({ requestId, status: answer.status, record: recordOf(answer) });
        }
      }));

      assert.equal(answers.length, TOTAL);
      const created = answers.filter((answer) => answer.status === 201);
      assert.equal(created.length, 1, 'exactly one report created the record');
      const id = answers[0]?.record.id as number;
      assert.ok(answers.every((answer) => answer.record.id === id), 'every report counted on one record');

      // Every answer's counter is its transaction's commit: exact, with nothing lost or counted twice.
      const transactions = transactionsOf(answers.map((answer) => answer.record.counter));
      assert.equal(transactions.at(-1)?.to, TOTAL);
      assert.equal(created[0]?.record.counter, transactions[0]?.to, 'the 201 came from the first transaction');

      const load = via[0] as LoadClient;
      const { body: stored } = await getJson<{ infrastructure_error: Recorded }>(load, `${BASE}/${id}.json`);
      assert.equal(stored.infrastructure_error.counter, TOTAL);

      const { body: buckets } = await getJson<Array<{ bucket: { count: number } }>>(load, `${BASE}/${id}/histogram.json?period=24h`);
      assert.equal(buckets.reduce((sum, { bucket }) => sum + bucket.count, 0), TOTAL);

      type Groups = Array<{ group: { value: string | null; count: number } }>;
      const { body: hosts } = await getJson<Groups>(load, `${BASE}/${id}/breakdown.json?by=host&per_page=100`);
      assert.deepEqual(
        hosts.map(({ group }) => group).sort((a, b) => String(a.value).localeCompare(String(b.value))),
        [0, 1, 2, 3].map((n) => ({ value: `host-${n}`, count: TOTAL / 4 })),
      );
      const { body: components } = await getJson<Groups>(load, `${BASE}/${id}/breakdown.json?by=component&per_page=100`);
      assert.deepEqual(
        components.map(({ group }) => group).sort((a, b) => String(a.value).localeCompare(String(b.value))),
        [0, 1].map((n) => ({ value: `via-server-${n}`, count: TOTAL / 2 })),
      );

      // The first 10 and the latest 100 (the defaults) are kept. Which report had which ordinal
      // within its transaction is not observable, but a transaction wholly inside one of the two
      // ranges is kept whole, and one wholly outside both is not kept at all.
      const { answer: page, body: occurrences } = await getJson<Array<{ occurrence: { request_id: string } }>>(load, `${BASE}/${id}/occurrences.json?per_page=1000`);
      assert.equal(page.headers['x-total'], '110');
      const kept = new Set(occurrences.map(({ occurrence }) => occurrence.request_id));
      assert.equal(kept.size, 110);
      const requestsOf = new Map<number, string[]>();
      for (const answer of answers) requestsOf.set(answer.record.counter, [...(requestsOf.get(answer.record.counter) ?? []), answer.requestId]);
      const inFirst = (n: number) => n <= 10;
      const inLatest = (n: number) => n > TOTAL - 100;
      for (const { from, to } of transactions) {
        const requests = requestsOf.get(to) as string[];
        const keptOfIt = requests.filter((requestId) => kept.has(requestId)).length;
        if ((inFirst(from) && inFirst(to)) || (inLatest(from) && inLatest(to))) assert.equal(keptOfIt, requests.length, `transaction ${from}..${to} kept whole`);
        else if (!inFirst(from) && !inLatest(to)) assert.equal(keptOfIt, 0, `transaction ${from}..${to} not kept`);
      }
    });

    it('write concurrent reports to one process in fewer transactions than reports (group commit)', async () => {
      const REPORTS = 400;
      const load = client(servers[0] as RunningServer, 50);
      const answers = await Promise.all(Array.from({ length: REPORTS }, () =>
        load.post(`${BASE}.json`, { error_class: 'BatchedError', backtrace: STORM_BACKTRACE })));
      assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([200, 201]));
      const transactions = transactionsOf(answers.map((answer) => recordOf(answer).counter));
      assert.equal(transactions.at(-1)?.to, REPORTS);
      assert.ok(transactions.length < REPORTS, `${REPORTS} reports in ${transactions.length} transactions`);
    });
  });

  it('keeps every acknowledged report through kill -9 with requests in flight', async () => {
    const CLIENTS = 10;
    const ACKNOWLEDGED_BEFORE_KILL = 1000;
    const fresh = await database();
    const spool = spoolDirectory();
    const server = await serve(fresh, spool);
    const load = client(server, CLIENTS);
    let sent = 0;
    let acknowledged = 0;
    let killed = false;
    let id: number | undefined;
    await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
      while (!killed) {
        sent += 1;
        const answer = await load.post(`${BASE}.json`, { error_class: 'KilledMidStream', backtrace: STORM_BACKTRACE, host: `host-${c}` }).catch(() => undefined);
        if (answer === undefined) return; // the connection died with the server: not acknowledged
        if (answer.status !== 200 && answer.status !== 201) assert.fail(`report answered ${answer.status} ${answer.body}`);
        acknowledged += 1;
        id = recordOf(answer).id;
        if (acknowledged === ACKNOWLEDGED_BEFORE_KILL) {
          // Every other client has a report in flight, unless its batch was answered at the same moment;
          // this one sends one more and kills before it can be answered: at least one report is sent and
          // never acknowledged, so the counter is checked against a `sent` above `acknowledged`.
          killed = true;
          sent += 1;
          void load.post(`${BASE}.json`, { error_class: 'KilledMidStream', backtrace: STORM_BACKTRACE, host: `host-${c}` }).catch(() => undefined);
          server.child.kill('SIGKILL');
        }
      }
    }));
    assert.equal((await exitOf(server.child)).signal, 'SIGKILL');

    const restarted = await serve(fresh, spool);
    const { body } = await getJson<{ infrastructure_error: Recorded }>(client(restarted, 1), `${BASE}/${id}.json`);
    const { counter } = body.infrastructure_error;
    assert.ok(counter >= acknowledged && counter <= sent, `counter ${counter} between ${acknowledged} acknowledged and ${sent} sent`);
  });

  /**
   * A real `cmi serve` with its own uncaughtException handler (src/cli/serve.ts); the only addition
   * is a way to crash it: on SIGUSR2, an exception nothing catches. It captures FAULTS injected faults
   * and crashes; then a new process on the same database and spool must record every one of them
   * (docs/operations.md#faults-of-cmi). With `whileWriting`, the test holds the database's write lock
   * from before the faults until after the crash, so the periodic write (each second) has begun and
   * waits at the crash.
   */
  const crashHoldingFaults = async ({ whileWriting }: { whileWriting: boolean }) => {
    const FAULTS = 30;
    const fresh = await database();
    const spool = spoolDirectory();
    const crashOnSignal = `process.on('SIGUSR2', () => setTimeout(() => { const error = new Error('deliberate crash'); error.name = 'DeliberateCrash'; throw error; }));`;
    const server = await serve(fresh, spool, {
      CMI_FAULT_INJECTION: 'capture',
      CMI_AUTH_CACHE_TTL: '300',
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=data:text/javascript,${encodeURIComponent(crashOnSignal)}`.trim(),
    });
    const load = client(server, 10);
    // Authenticated once before the lock: the credential is then trusted from memory.
    assert.equal((await load.get('/version.json')).status, 200);
    let release = () => {};
    let lockHolder: Promise<void> | undefined;
    let locker: Database | undefined;
    if (whileWriting) {
      locker = openDatabase(loadConfig({ DATABASE_URL: fresh.url, LOG_LEVEL: 'silent' }));
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const lockTaken = new Promise<void>((resolve) => (locked = resolve));
      // SQLite: the transaction's `begin immediate` takes the write lock. PostgreSQL: the table lock
      // makes the write's insert wait.
      lockHolder = locker.db.transaction().execute(async (trx) => {
        if (locker?.dialect.name === 'postgres') await sql`lock table infrastructure_errors in exclusive mode`.execute(trx);
        locked();
        await released;
      });
      await lockTaken;
    }
    try {
      const faults = await Promise.all(Array.from({ length: FAULTS }, () => load.request('GET', '/version.json', undefined, { 'x-cmi-inject-fault': '1' })));
      assert.deepEqual(faults.map((answer) => answer.status), Array(FAULTS).fill(500));
      if (whileWriting) await new Promise((resolve) => setTimeout(resolve, 1500));
      server.child.kill('SIGUSR2');
      assert.equal((await exitOf(server.child)).code, 1);
    } finally {
      release();
      await lockHolder;
      await locker?.close();
    }
    assert.match(server.errors, /cmi: uncaught exception, stopping: DeliberateCrash: deliberate crash/);

    // What the crash left: the crash itself, and whatever of the injected faults the periodic write
    // had not committed; with what the database has, every one of them.
    const spooled = new Map<string, number>();
    for (const name of readdirSync(spool)) {
      for (const line of readFileSync(join(spool, name), 'utf8').split('\n').filter(Boolean)) {
        const report = JSON.parse(line) as { error_class: string; count: number; component: string };
        spooled.set(report.error_class, (spooled.get(report.error_class) ?? 0) + report.count);
        if (report.error_class === 'DeliberateCrash') assert.equal(report.component, 'uncaught-exception');
      }
    }
    assert.equal(spooled.get('DeliberateCrash'), 1);
    const written = await countersByClass(fresh);
    assert.equal(written.get('DeliberateCrash'), undefined);
    assert.equal((spooled.get('InjectedFault') ?? 0) + (written.get('InjectedFault') ?? 0), FAULTS, `spooled ${spooled.get('InjectedFault')}, written ${written.get('InjectedFault')}`);

    const restarted = await serve(fresh, spool);
    const reader = client(restarted, 1);
    await eventually(async () => {
      const counters = await countersByClass(fresh);
      assert.equal(counters.get('InjectedFault'), FAULTS);
      assert.equal(counters.get('DeliberateCrash'), 1);
    }, 5000);
    const { body: crashes } = await getJson<Array<{ infrastructure_error: Recorded }>>(reader, `${BASE}.json?error_class=DeliberateCrash&component=uncaught-exception`);
    assert.equal(crashes.length, 1);
    // Recorded once: the spool file is gone, so no later start records it again.
    await eventually(() => assert.deepEqual(readdirSync(spool), []));
  };

  it('spools the faults a crashing process held, and the next process records them', () => crashHoldingFaults({ whileWriting: false }));

  // The batch a periodic write has taken is neither held nor committed: it is spooled all the same.
  it('spools the faults a crashing process was writing when it crashed', () => crashHoldingFaults({ whileWriting: true }));

  it('writes the faults it holds when stopped with SIGTERM before the periodic write', async () => {
    const FAULTS = 50;
    // The periodic write comes 1 s after start: only a SIGTERM sent before it proves the stop writes the
    // faults. On a machine slow enough to miss that, the try is made again (at most three in all).
    let fresh: FreshDatabase | undefined;
    let sinceFirst = Infinity;
    for (let tries = 0; tries < 3 && sinceFirst >= 1000; tries++) {
      fresh = await database();
      const server = await serve(fresh, spoolDirectory(), { CMI_FAULT_INJECTION: 'capture' });
      const load = client(server, 25);
      const start = Date.now();
      const faults = await Promise.all(Array.from({ length: FAULTS }, () => load.request('GET', '/version.json', undefined, { 'x-cmi-inject-fault': '1' })));
      assert.deepEqual(faults.map((answer) => answer.status), Array(FAULTS).fill(500));
      server.child.kill('SIGTERM');
      sinceFirst = Date.now() - start;
      assert.equal((await exitOf(server.child)).code, 0);
    }
    assert.ok(sinceFirst < 1000, `SIGTERM ${sinceFirst} ms after the first fault, in each of three tries`);
    const counters = await countersByClass(fresh as FreshDatabase);
    assert.equal(counters.get('InjectedFault'), FAULTS);
  });

  describe('retention in two processes', () => {
    let t: TestApp;
    let second: Database;
    before(async () => {
      t = await createTestApp();
      second = openDatabase(t.config);
    });
    after(async () => {
      await second.close();
      await t.close();
    });

    /** The retention job as each process runs it (src/app/app.ts), on a connection of its own. */
    const jobOn = (database: Database) => {
      const tracker = trackerService(trackerRepository(database), t.time.clock, auditTrailOn(database, t.time.clock, 400), t.config.errors);
      const settings = settingsRepository(database);
      return retentionJob(() => tracker.prune(), { claim: (name, until, now) => settings.claimLease(name, until, now) }, t.time.clock, HOUR_MS);
    };
    const report = async (fields: Record<string, string>) => {
      const answer = await t.app.inject({
        method: 'POST',
        url: `${BASE}.json`,
        headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
        payload: JSON.stringify(fields),
      });
      assert.ok(answer.statusCode === 200 || answer.statusCode === 201, answer.body);
      return (JSON.parse(answer.body) as { infrastructure_error: Recorded }).infrastructure_error.id;
    };
    const rowsOf = async (id: number) => {
      const { db } = t.database;
      return {
        occurrences: (await db.selectFrom('error_occurrences').select('id').where('error_id', '=', id).execute()).length,
        hours: (await db.selectFrom('error_histogram').select(['hour', 'count']).where('error_id', '=', id).orderBy('hour').execute())
          .map((row) => ({ hour: Number(row.hour), count: Number(row.count) })),
        breakdown: (await db.selectFrom('error_breakdown').select(['dimension', 'value', 'count']).where('error_id', '=', id).orderBy('dimension').orderBy('value').execute())
          .map((row) => ({ dimension: row.dimension, value: row.value, count: Number(row.count) })),
      };
    };

    it('runs in exactly one process per interval, removing stale errors with their rows and old hourly counts', async () => {
      const start = t.time.clock().getTime();
      const hourAt = (ms: number) => Math.floor(ms / HOUR_MS);
      const stale = await report({ error_class: 'StaleError', backtrace: 'src/a.ts:1', host: 'old-host', component: 'old-component' });
      t.time.advance(86_400);
      const fresh = await report({ error_class: 'FreshError', backtrace: 'src/b.ts:1', host: 'new-host' });
      t.time.set(new Date(start + 80 * 86_400_000).toISOString());
      assert.equal(await report({ error_class: 'FreshError', backtrace: 'src/b.ts:1', host: 'new-host' }), fresh);
      assert.deepEqual(await rowsOf(stale), {
        occurrences: 1,
        hours: [{ hour: hourAt(start), count: 1 }],
        breakdown: [{ dimension: 'component', value: 'old-component', count: 1 }, { dimension: 'host', value: 'old-host', count: 1 }],
      });
      const freshHours = [{ hour: hourAt(start + 86_400_000), count: 1 }, { hour: hourAt(start + 80 * 86_400_000), count: 1 }];
      const freshBreakdown = [{ dimension: 'component', value: '', count: 2 }, { dimension: 'host', value: 'new-host', count: 2 }];
      assert.deepEqual(await rowsOf(fresh), { occurrences: 2, hours: freshHours, breakdown: freshBreakdown });

      // 90 days (the default) and an hour after StaleError was last seen.
      t.time.set(new Date(start + 90 * 86_400_000 + HOUR_MS).toISOString());
      const jobs = [jobOn(t.database), jobOn(second)];
      const outcomes = [];
      for (let round = 0; round < 5; round++) {
        if (round > 0) t.time.advance(HOUR_MS / 1000 + 1);
        const runs = await Promise.all(jobs.map((job) => job.run()));
        assert.equal(runs.filter((run) => run.ran).length, 1, `round ${round}: ${JSON.stringify(runs)}`);
        outcomes.push(runs.find((run) => run.ran));
        // Within the interval the lease is held: neither runs again.
        assert.deepEqual(await Promise.all(jobs.map((job) => job.run())), [{ ran: false }, { ran: false }]);
      }
      // The first run removed StaleError and FreshError's hourly count from 89 days ago (older than 31 days).
      assert.deepEqual(outcomes, [
        { ran: true, errors: 1, buckets: 1 },
        ...Array.from({ length: 4 }, () => ({ ran: true, errors: 0, buckets: 0 })),
      ]);
      const remaining = await t.database.db.selectFrom('infrastructure_errors').select('error_class').execute();
      assert.deepEqual(remaining, [{ error_class: 'FreshError' }]);
      assert.deepEqual(await rowsOf(stale), { occurrences: 0, hours: [], breakdown: [] });
      assert.deepEqual(await rowsOf(fresh), { occurrences: 2, hours: freshHours.slice(1), breakdown: freshBreakdown });
    });
  });
});
