import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { listenForScrapes } from '../src/metrics/metrics-server.js';
import { PROM_CLIENT_GAUGES_NAMED_TOTAL } from '../src/metrics/metrics.js';
import { UNMATCHED_ROUTE } from '../src/http/route-label.js';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';
import { ACCESS_DENIED_JSON, get } from './support/http.js';
import { parsePrometheusText, sampleValue } from './support/prometheus-text.js';
import { startServer } from './support/cli.js';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { dialectFor } from '../src/db/database-url.js';
import { cmiReleaseVersion } from '../src/version/version.js';
import { freePort } from './support/throwaway-postgres.js';
import { freshDatabase } from './support/database.js';
import { eventually } from './support/eventually.js';
import { statementGate } from './support/statement-gate.js';

const TOKEN = 'metrics-token-0123456789abcdef';
const BEARER = { authorization: `Bearer ${TOKEN}` };

describe('GET /metrics with CMI_METRICS_TOKEN', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ CMI_METRICS_TOKEN: TOKEN });
  });
  after(() => t.close());

  const scrape = async () => {
    const res = await get(t.app, '/metrics', BEARER);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    return parsePrometheusText(res.body);
  };

  it('refuses a missing, wrong or non-bearer token with 401, and never takes a user\'s credentials', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer metrics-token-0123456789abcdeX' }, { authorization: `Basic ${TOKEN}` }, { authorization: t.adminAuth }, { authorization: 'Bearer ' }]) {
      const res = await get(t.app, '/metrics', headers);
      assert.equal(res.statusCode, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="cmi-metrics"');
      assert.equal(res.body, ACCESS_DENIED_JSON);
    }
  });

  it('is valid Prometheus text whose counts move as requests are made, labelled by route pattern', async () => {
    const before = await scrape();
    const users = { route: '/users/:id', method: 'GET', status_class: '2xx' };
    await get(t.app, `/users/${t.alice.id}.json`, { authorization: t.adminAuth });
    await get(t.app, `/users/${t.alice.id}.xml`, { authorization: t.adminAuth });
    await get(t.app, '/users/999999.json', { authorization: t.adminAuth });
    await get(t.app, '/no/such/path/4711.json', { authorization: t.adminAuth });
    await get(t.app, '/another-unknown-path', { authorization: t.adminAuth });
    const now = await scrape();
    assert.equal(sampleValue(now, 'cmi_http_requests_total', users) - sampleValue(before, 'cmi_http_requests_total', users), 2);
    const missing = { route: '/users/:id', method: 'GET', status_class: '4xx' };
    assert.equal(sampleValue(now, 'cmi_http_requests_total', missing) - sampleValue(before, 'cmi_http_requests_total', missing), 1);
    const unmatched = { route: UNMATCHED_ROUTE, method: 'GET', status_class: '4xx' };
    assert.equal(sampleValue(now, 'cmi_http_requests_total', unmatched) - sampleValue(before, 'cmi_http_requests_total', unmatched), 2);
    // Never the raw URL in a label.
    const routes = new Set(now.get('cmi_http_requests_total')?.samples.map((sample) => sample.labels.route));
    assert.deepEqual([...routes].filter((route) => route?.includes('4711') || route?.includes('unknown')), []);
    assert.equal(sampleValue(now, 'cmi_http_request_duration_seconds_count', { route: '/users/:id' }) - sampleValue(before, 'cmi_http_request_duration_seconds_count', { route: '/users/:id' }), 3);
    assert.equal(now.get('cmi_http_request_duration_seconds')?.type, 'histogram');
    // The scrape being answered is the one request in flight.
    assert.equal(sampleValue(now, 'cmi_http_requests_in_flight'), 1);
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_gc_duration_seconds']) assert.ok(now.has(name), name);
  });

  it('counts authentications ok, failed and locked', async () => {
    const before = await scrape();
    await get(t.app, '/version.json', { authorization: t.aliceAuth });
    await get(t.app, '/version.json', { authorization: t.basic('alice', 'wrong-password') });
    await get(t.app, '/version.json', { authorization: t.basic('alice', 'wrong-password') });
    const now = await scrape();
    const moved = (outcome: string) => sampleValue(now, 'cmi_authentications_total', { outcome }) - sampleValue(before, 'cmi_authentications_total', { outcome });
    assert.equal(moved('ok'), 1);
    assert.equal(moved('failed'), 2);
    assert.equal(moved('locked'), 0);
  });

  it('counts error reports new, repeat and rejected', async () => {
    const before = await scrape();
    const post = (body: string) => t.app.inject({ method: 'POST', url: '/sysadmin_tools/infrastructure/errors.json', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, body });
    assert.equal((await post('{"error_class":"MetricsError","message":"m"}')).statusCode, 201);
    assert.equal((await post('{"error_class":"MetricsError","message":"m"}')).statusCode, 200);
    assert.equal((await post('{"message":"no class"}')).statusCode, 422);
    const now = await scrape();
    const moved = (name: string, labels: Record<string, string>) => sampleValue(now, name, labels) - sampleValue(before, name, labels);
    assert.equal(moved('cmi_infrastructure_error_reports_total', { kind: 'new' }), 1);
    assert.equal(moved('cmi_infrastructure_error_reports_total', { kind: 'repeat' }), 1);
    assert.equal(moved('cmi_infrastructure_error_reports_rejected_total', { status: '422' }), 1);
  });

  it('reports the database pool on both databases (SQLite: its one connection), and query times only on PostgreSQL', async () => {
    const before = await scrape();
    await get(t.app, `/users/${t.alice.id}.json`, { authorization: t.adminAuth });
    const families = await scrape();
    const postgres = t.database.dialect.name === 'postgres';
    assert.equal(families.has('cmi_db_pool_connections'), true);
    assert.equal(families.has('cmi_db_query_duration_seconds'), postgres);
    const pool = (state: string) => sampleValue(families, 'cmi_db_pool_connections', { state });
    assert.equal(pool('in_use') + pool('idle'), pool('total'));
    assert.equal(pool('waiting'), 0);
    if (!postgres) assert.equal(pool('total'), 1);
    if (postgres) {
      assert.ok(sampleValue(families, 'cmi_db_pool_connections', { state: 'total' }) >= 1);
      // Reading the user is at least one query.
      assert.ok(sampleValue(families, 'cmi_db_query_duration_seconds_count') > sampleValue(before, 'cmi_db_query_duration_seconds_count'));
    }
  });
});

describe('what runs and what waits: gauges read when scraped (docs/operations.md#metrics)', () => {
  let t: TestApp;
  let closedPort: number;
  before(async () => {
    closedPort = await freePort();
    // Alerts to a port nothing listens on: a new error's delivery stays pending, retried.
    t = await createTestApp({ CMI_METRICS_TOKEN: TOKEN, CMI_ALERT_WEBHOOK_URL: `http://127.0.0.1:${closedPort}/hook`, CMI_WEBHOOK_SECRET: 'webhook-secret-0123456789', CMI_WEBHOOK_RETRY_BASE: '3600000', CMI_DB_STATEMENT_TIMEOUT: '20000' });
  });
  after(() => t.close());

  const scrape = async () => {
    const res = await get(t.app, '/metrics', BEARER);
    assert.equal(res.statusCode, 200);
    return parsePrometheusText(res.body);
  };
  const report = (errorClass: string) => t.app.inject({
    method: 'POST', url: '/sysadmin_tools/infrastructure/errors.json', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, body: JSON.stringify({ error_class: errorClass }),
  });

  it('cmi_build_info names cmi\'s version, node\'s and the database', async () => {
    const families = await scrape();
    const samples = families.get('cmi_build_info')?.samples ?? [];
    assert.deepEqual(samples.map((sample) => [sample.labels, sample.value]), [[{ version: cmiReleaseVersion(), node: process.version, database: t.database.dialect.name }, 1]]);
  });

  it('cmi_webhook_deliveries_pending is the outbox\'s pending rows, counted when scraped', async () => {
    assert.equal(sampleValue(await scrape(), 'cmi_webhook_deliveries_pending'), 0);
    assert.equal((await report('PendingOne')).statusCode, 201);
    assert.equal((await report('PendingTwo')).statusCode, 201);
    const rows = await t.database.db.selectFrom('webhook_deliveries').where('state', '=', 'pending').select('id').execute();
    assert.equal(rows.length, 2);
    assert.equal(sampleValue(await scrape(), 'cmi_webhook_deliveries_pending'), 2);
    await t.database.db.updateTable('webhook_deliveries').set({ state: 'failed' }).where('id', '=', rows[0]!.id).execute();
    assert.equal(sampleValue(await scrape(), 'cmi_webhook_deliveries_pending'), 1);
  });

  it('cmi_page_cache_bytes is what each cache holds: 0, then more with each page kept', async () => {
    const bytes = async (cache: string) => sampleValue(await scrape(), 'cmi_page_cache_bytes', { cache });
    const users0 = await bytes('users');
    assert.equal((await get(t.app, '/users.json?per_page=1', { authorization: t.adminAuth })).statusCode, 200);
    const users1 = await bytes('users');
    assert.ok(users1 > users0, `${users1} > ${users0}`);
    assert.equal((await get(t.app, '/users.json?per_page=2', { authorization: t.adminAuth })).statusCode, 200);
    assert.ok(await bytes('users') > users1);
    const errors0 = await bytes('errors');
    assert.equal((await get(t.app, '/sysadmin_tools/infrastructure/errors.json', { authorization: t.adminAuth })).statusCode, 200);
    assert.ok(await bytes('errors') > errors0);
  });

  it('cmi_infrastructure_error_reports_waiting counts the reports queued behind a batch the database holds up; the pool shows it in use', async () => {
    assert.equal(sampleValue(await scrape(), 'cmi_infrastructure_error_reports_waiting'), 0);
    // Another connection holds the tracker's table (SQLite: the whole database) until released.
    const release = await holdTrackerTable(t.config.databaseUrl);
    const answers: Promise<unknown>[] = [];
    try {
      const first = report('HeldFirst');
      // The first report's batch is being written (waiting for the lock); the next three wait behind it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      answers.push(first, report('HeldA'), report('HeldB'), report('HeldC'));
      await eventually(async () => assert.equal(sampleValue(await scrape(), 'cmi_infrastructure_error_reports_waiting'), 3));
      if (t.database.dialect.name === 'postgres') assert.ok(sampleValue(await scrape(), 'cmi_db_pool_connections', { state: 'in_use' }) >= 1);
    } finally {
      await release();
    }
    for (const answer of await Promise.all(answers)) assert.equal((answer as { statusCode: number }).statusCode, 201);
    assert.equal(sampleValue(await scrape(), 'cmi_infrastructure_error_reports_waiting'), 0);
  });
});

/** Another connection holds the error tracker's table (SQLite: the whole database) until the returned function releases it. */
async function holdTrackerTable(url: string): Promise<() => Promise<void>> {
  const dialect = dialectFor(url);
  if (dialect.name === 'sqlite') {
    const other = new SQLite(dialect.target);
    other.exec('begin exclusive');
    return () => {
      other.exec('commit');
      other.close();
      return Promise.resolve();
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('begin');
  await client.query('lock table infrastructure_errors in exclusive mode');
  return async () => {
    await client.query('commit');
    await client.end();
  };
}

describe('metrics off (the default)', () => {
  it('has no /metrics and no metrics on the app', async () => {
    const t = await createTestApp();
    try {
      assert.equal(t.app.metrics, undefined);
      assert.equal((await get(t.app, '/metrics', BEARER)).statusCode, 401);
      assert.equal((await get(t.app, '/metrics', { authorization: t.adminAuth })).statusCode, 404);
    } finally {
      await t.close();
    }
  });
});

describe('CMI_METRICS_PORT', () => {
  it('serves /metrics without credentials on 127.0.0.1 over a real socket, and not on the API port', async () => {
    const t = await createTestApp({ CMI_METRICS_PORT: '9' });
    const metrics = t.app.metrics;
    assert.ok(metrics);
    const server = await listenForScrapes(metrics, 0);
    try {
      const apiPort = await listenLocally(t.app);
      const address = server.address() as { address: string; port: number };
      assert.equal(address.address, '127.0.0.1');
      await fetch(`http://127.0.0.1:${apiPort}/version.json`, { headers: { authorization: t.adminAuth } });
      const res = await fetch(`http://127.0.0.1:${address.port}/metrics`);
      assert.equal(res.status, 200);
      const families = parsePrometheusText(await res.text());
      assert.equal(sampleValue(families, 'cmi_http_requests_total', { route: '/version', method: 'GET', status_class: '2xx' }), 1);
      assert.equal((await fetch(`http://127.0.0.1:${address.port}/users.json`)).status, 404);
      assert.equal((await fetch(`http://127.0.0.1:${apiPort}/metrics`, { headers: { authorization: t.adminAuth } })).status, 404);
    } finally {
      server.close();
      await t.close();
    }
  });
});

/**
 * cmi_http_requests_in_flight over real sockets, read from the metrics port (whose own scrapes are no
 * request of the app, so the gauge of an idle app is exactly 0), for every way a request can end
 * (docs/operations.md#metrics).
 */
describe('cmi_http_requests_in_flight', () => {
  const gate = statementGate();
  let t: TestApp;
  let port: number;
  let scrapes: Server;
  /** The server's side of each connection, by the client's port: settles once the server has closed it. */
  const serverSides = new Map<number, Promise<void>>();
  before(async () => {
    t = await createTestApp({ CMI_METRICS_PORT: '9', CMI_BODY_TIMEOUT: '400', CMI_REQUEST_TIMEOUT: '1500', CMI_FAULT_INJECTION: 'capture' }, { gate });
    const metrics = t.app.metrics;
    assert.ok(metrics);
    scrapes = await listenForScrapes(metrics, 0);
    port = await listenLocally(t.app);
    t.app.server.on('connection', (socket: Socket) => {
      const clientPort = socket.remotePort ?? 0;
      // A turn of the event loop after the close, so every listener of the close has run; the port
      // forgotten then, as a later connection may have it.
      serverSides.set(clientPort, new Promise((closed) => socket.once('close', () => {
        serverSides.delete(clientPort);
        setImmediate(closed);
      })));
    });
  });
  after(async () => {
    scrapes.close();
    await t.close();
  });

  const inFlight = async () => {
    const res = await fetch(`http://127.0.0.1:${(scrapes.address() as { port: number }).port}/metrics`);
    assert.equal(res.status, 200);
    return sampleValue(parsePrometheusText(await res.text()), 'cmi_http_requests_in_flight');
  };

  /** A client connection; `closedByServer` settles when the server has noticed the connection's end. */
  const open = async () => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    await once(socket, 'connect');
    // Wrapped: eventually() would wait for a promise it is given back.
    const { serverSide } = await eventually(() => {
      const found = serverSides.get(socket.localPort ?? -1);
      assert.ok(found, 'the server has not seen this connection yet');
      return { serverSide: found };
    });
    return { socket, received: () => received, closedByServer: () => serverSide };
  };

  const SHORT = { timeout: 15_000 };
  const postHead = (length: number, extra = '') =>
    `POST /users.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;
  const statusOf = (answer: string) => /^HTTP\/1\.1 (\d+) /.exec(answer)?.[1];

  it('is 0 with nothing in flight, and 0 again after requests answered in full', SHORT, async () => {
    assert.equal(await inFlight(), 0);
    const c = await open();
    c.socket.write(`GET /version.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}\r\n\r\nGET /version.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}\r\nConnection: close\r\n\r\n`);
    await c.closedByServer();
    assert.equal(c.received().match(/HTTP\/1\.1 200 /g)?.length, 2);
    assert.equal(await inFlight(), 0);
  });

  it('goes back to 0 when a client sends headers and part of a body, then destroys the socket', SHORT, async () => {
    for (let i = 1; i <= 3; i++) {
      const c = await open();
      c.socket.write(`${postHead(100)}{"user":{"login":`);
      // The request has started: it is in flight while its body is awaited.
      await eventually(async () => assert.equal(await inFlight(), 1));
      c.socket.destroy();
      await c.closedByServer();
      assert.equal(c.received(), '', 'nothing was answered');
      assert.equal(await inFlight(), 0, `after abort ${i}`);
    }
  });

  it('goes back to 0 when a body stops arriving (408 after CMI_BODY_TIMEOUT)', SHORT, async () => {
    const c = await open();
    c.socket.write(`${postHead(100)}{"user":`);
    await c.closedByServer();
    assert.equal(statusOf(c.received()), '408');
    assert.equal(await inFlight(), 0);
  });

  it('goes back to 0 when a body arrives too slowly in all (408 after CMI_REQUEST_TIMEOUT)', SHORT, async () => {
    const c = await open();
    c.socket.write(postHead(100));
    // A byte every 100 ms: never a pause of CMI_BODY_TIMEOUT, but 100 bytes take longer than CMI_REQUEST_TIMEOUT.
    const drip = setInterval(() => c.socket.write('x'), 100);
    try {
      await c.closedByServer();
    } finally {
      clearInterval(drip);
    }
    assert.equal(statusOf(c.received()), '408');
    assert.equal(await inFlight(), 0);
  });

  it('goes back to 0 when the socket is destroyed while a handler runs, with a request pipelined behind it', SHORT, async () => {
    // A user whose credentials this app has not verified yet: the statement after the one that reads
    // them waits until released. Before the fault below, whose record the app writes in the
    // background, a statement the gate could hold instead.
    const [user] = await t.addUsers(1);
    assert.ok(user);
    const pause = gate.pauseAfter((result) => result.rows.some((row) => (row as { login?: unknown }).login === user.login));
    const c = await open();
    c.socket.write(`GET /users/${user.id}.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.basic(user.login, 'shared-password')}\r\n\r\nGET /version.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}\r\n\r\n`);
    try {
      await pause.reached;
      // The second is answered, its answer queued behind the first's.
      await eventually(async () => assert.equal(await inFlight(), 2));
      c.socket.destroy();
      await c.closedByServer();
      assert.equal(await inFlight(), 0);
    } finally {
      // The first handler ends after its client is gone: it moves nothing.
      pause.release();
    }
    const next = await open();
    next.socket.write(`GET /users.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}\r\nConnection: close\r\n\r\n`);
    await next.closedByServer();
    assert.equal(statusOf(next.received()), '200');
    assert.equal(c.received(), '');
    assert.equal(await inFlight(), 0);
  });

  it('goes back to 0 after answers that are errors: a fault (500) and a malformed body (422)', SHORT, async () => {
    const fault = await open();
    fault.socket.write(`GET /users.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}\r\nX-Cmi-Inject-Fault: 1\r\nConnection: close\r\n\r\n`);
    await fault.closedByServer();
    assert.equal(statusOf(fault.received()), '500');
    const malformed = await open();
    malformed.socket.write(`${postHead(3, 'Connection: close\r\n')}{{{`);
    await malformed.closedByServer();
    assert.equal(statusOf(malformed.received()), '422');
    assert.equal(await inFlight(), 0);
  });
});

/**
 * promtool (Prometheus's own checker; Debian's `prometheus` package, which .ci/run installs) on the
 * real text of /metrics after traffic that made every family cmi serves present: it must find nothing
 * to say, neither an error nor a lint warning (docs/operations.md#metrics).
 */
describe('promtool check metrics', () => {
  it('accepts every metric cmi serves, prom-client\'s defaults included, without a warning', async () => {
    const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    assert.equal(promtool.error, undefined, 'promtool is needed for this test: apt-get install prometheus (.ci/run installs it)');
    const t = await createTestApp({ CMI_METRICS_TOKEN: TOKEN });
    try {
      const post = (body: string) => t.app.inject({ method: 'POST', url: '/sysadmin_tools/infrastructure/errors.json', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, body });
      assert.equal((await post('{"error_class":"PromtoolError","message":"m"}')).statusCode, 201);
      assert.equal((await post('{"message":"no class"}')).statusCode, 422);
      assert.equal((await get(t.app, '/users.json', { authorization: t.basic('alice', 'wrong-password') })).statusCode, 401);
      assert.equal((await get(t.app, '/users.json', { authorization: t.adminAuth })).statusCode, 200);
      assert.equal((await get(t.app, '/no/such/path', { authorization: t.adminAuth })).statusCode, 404);
      const res = await get(t.app, '/metrics', BEARER);
      assert.equal(res.statusCode, 200);
      const check = spawnSync('promtool', ['check', 'metrics'], { input: res.body, encoding: 'utf8' });
      assert.deepEqual({ status: check.status, stdout: check.stdout, stderr: check.stderr }, { status: 0, stdout: '', stderr: '' });
      // What it checked: every family of cmi, and prom-client's defaults without their gauges named *_total.
      const families = parsePrometheusText(res.body);
      const expected = ['cmi_http_requests_total', 'cmi_http_request_duration_seconds', 'cmi_http_requests_in_flight', 'cmi_authentications_total', 'cmi_infrastructure_error_reports_total', 'cmi_infrastructure_error_reports_rejected_total',
        'cmi_build_info', 'cmi_db_pool_connections', 'cmi_webhook_deliveries_pending', 'cmi_infrastructure_error_reports_waiting', 'cmi_page_cache_bytes',
        'cmi_log_records_total', 'cmi_log_dropped_total', 'cmi_log_records_judged_total', 'cmi_syslog_connections'];
      if (t.database.dialect.name === 'postgres') expected.push('cmi_db_query_duration_seconds');
      assert.deepEqual([...families.keys()].filter((name) => name.startsWith('cmi_')).sort(), expected.sort());
      for (const name of PROM_CLIENT_GAUGES_NAMED_TOTAL) assert.equal(families.has(name), false, name);
      assert.ok(families.has('nodejs_active_handles'));
    } finally {
      await t.close();
    }
  });
});

/** Two consecutive ports of 127.0.0.1 free now. */
async function freePortPair(): Promise<number> {
  const free = (port: number) => new Promise<boolean>((resolve) => {
    const server = createServer().once('error', () => resolve(false)).listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    if ((await free(port)) && (await free(port + 1))) return port;
  }
}

describe('cmi serve --workers 2 with CMI_METRICS_PORT', () => {
  it('gives each worker its own port, port and port + 1: scraping both counts every request once; --log-format json writes JSON lines', async () => {
    const database = await freshDatabase();
    const port = await freePortPair();
    const server = await startServer({ DATABASE_URL: database.url, CMI_ADMIN_PASSWORD: 'metrics-password', CMI_METRICS_PORT: String(port) }, ['--workers', '2', '--log-format', 'json']);
    try {
      const lines = server.output.trim().split('\n').map((line) => JSON.parse(line) as { level: string; msg: string });
      assert.match(lines[0]?.msg ?? '', /^cmi listening on http:\/\/127\.0\.0\.1:\d+ with 2 workers \(/);
      assert.equal(lines.at(-1)?.msg, `Metrics: http://127.0.0.1:${port}/metrics (worker 1) to http://127.0.0.1:${port + 1}/metrics (worker 2)`);
      const auth = `Basic ${Buffer.from('admin:metrics-password').toString('base64')}`;
      for (let i = 0; i < 10; i++) assert.equal((await fetch(`${server.baseUrl}/version.json`, { headers: { authorization: auth, connection: 'close' } })).status, 200);
      let total = 0;
      for (const metricsPort of [port, port + 1]) {
        const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
        assert.equal(res.status, 200);
        total += sampleValue(parsePrometheusText(await res.text()), 'cmi_http_requests_total', { route: '/version', method: 'GET', status_class: '2xx' });
      }
      assert.equal(total, 10);
    } finally {
      await server.stop();
      await database.drop();
    }
  });
});

describe('the Prometheus text reader of the tests', () => {
  it('refuses what the format does not allow', () => {
    const good = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 2\n';
    assert.equal(sampleValue(parsePrometheusText(good), 'a_total', { x: '1' }), 2);
    for (const bad of [
      good.slice(0, -1),
      `${good}a_total{x="1"} 3\n`,
      'a_total 1\n',
      '# TYPE a counter\na{x="1} 1\n',
      '# TYPE a counter\na{1x="1"} 1\n',
      '# TYPE a counter\na 1x\n',
      '# TYPE a counter\n# TYPE b counter\na 1\nb 1\na{y="2"} 1\n',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n',
    ]) assert.throws(() => parsePrometheusText(bad), Error, bad);
  });
});
