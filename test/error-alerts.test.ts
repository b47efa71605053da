import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/app/app.js';
import { type Database, openDatabase } from '../src/db/database.js';
import { createTestApp, type TestApp } from './support/app.js';
import { runCmi, runCmiProcess, startServer } from './support/cli.js';
import { freshDatabase } from './support/database.js';
import { ERRORS, forbiddenJson, JSON_TYPE, XML_DECLARATION, XML_TYPE } from './support/error-reports.js';
import { eventually } from './support/eventually.js';
import { type WebhookReceiver, webhookReceiver } from './support/webhook-receiver.js';
import { validateResponses } from './support/response-validation.js';

// Alerts (docs/reporting-and-alerts.md#alerts) through the durable outbox, against a real receiver
// on a free port: what is sent and when, retries, 410, several processes, a restart, the list.

const SECRET = 'alert-secret-0123456789';
const DELIVERIES = '/sysadmin_tools/infrastructure/deliveries';
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The settings of these tests: a quick poll, a spike at more than 5 occurrences a minute, the default hour of cooldown. */
const alertEnv = (receiver: WebhookReceiver) => ({
  CMI_ALERT_WEBHOOK_URL: receiver.url,
  CMI_WEBHOOK_SECRET: SECRET,
  CMI_WEBHOOK_POLL_INTERVAL: '20',
  CMI_WEBHOOK_TIMEOUT: '1000',
  CMI_ALERT_SPIKE_THRESHOLD: '5',
  CMI_ALERT_SPIKE_WINDOW: '60',
});

const fault = (n: number | string) => ({ error_class: 'RangeError', message: `pool exhausted ${n}`, backtrace: `src/hypervisor/pool.ts:88:in 'allocate${n}'` });
const idOf = (body: string) => (JSON.parse(body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
const events = (receiver: WebhookReceiver) => receiver.received.map((r) => `${String(r.json.event)}:${(r.json.infrastructure_error as { id: number }).id}`);

async function reportNew(t: TestApp, n: number | string, app: FastifyInstance = t.app): Promise<number> {
  const res = await app.inject({ method: 'POST', url: `${ERRORS}.json`, payload: JSON.stringify(fault(n)), headers: { authorization: t.adminAuth, 'content-type': 'application/json' } });
  assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
  return idOf(res.body);
}

const deliveryRows = (database: Database) =>
  database.db.selectFrom('webhook_deliveries').select(['id', 'kind', 'error_id', 'state', 'attempts', 'last_status', 'delivery_id']).orderBy('id').execute();

describe('alerts', { timeout: 600_000 }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  const setUp = async (answer?: Parameters<typeof webhookReceiver>[1], env: Record<string, string> = {}) => {
    const receiver = await webhookReceiver(SECRET, answer);
    const t = await createTestApp({ ...alertEnv(receiver), ...env });
    cleanups.push(async () => {
      await t.close();
      await receiver.stop();
    });
    return { receiver, t };
  };

  it('a new error sends one signed alert; its repeats none; deleted and back, it is new again', async () => {
    const { receiver, t } = await setUp();
    const id = await reportNew(t, 'a');
    await eventually(() => assert.equal(receiver.received.length, 1));
    const [got] = receiver.received;
    assert.equal(got!.signatureValid, true);
    assert.equal(got!.headers['content-type'], 'application/json');
    assert.equal(got!.headers['x-cmi-timestamp'], String(Math.floor(t.time.clock().getTime() / 1000)));
    const link = `http://127.0.0.1:3000${ERRORS}/${id}.json`;
    const record = await t.app.inject({ method: 'GET', url: `${ERRORS}/${id}.json`, headers: { authorization: t.adminAuth } });
    assert.equal(got!.body, JSON.stringify({
      event: 'new',
      text: `[cmi] New error #${id}: RangeError: pool exhausted a ${link}`,
      infrastructure_error: (JSON.parse(record.body) as { infrastructure_error: unknown }).infrastructure_error,
      url: link,
      console_url: `http://127.0.0.1:3000/console/errors/${id}`,
    }));
    // Recorded once the receiver's answer is in.
    await eventually(async () => assert.deepEqual((await deliveryRows(t.database)).map((r) => [r.kind, Number(r.error_id), r.state, Number(r.attempts), Number(r.last_status), r.delivery_id]),
      [['new', id, 'delivered', 1, 200, got!.headers['x-cmi-delivery']]]));

    for (let i = 0; i < 3; i++) await reportNew(t, 'a');
    await settle(200);
    assert.equal(receiver.received.length, 1);
    assert.equal((await deliveryRows(t.database)).length, 1);

    const deleted = await t.app.inject({ method: 'DELETE', url: `${ERRORS}/${id}.json`, headers: { authorization: t.adminAuth } });
    assert.equal(deleted.statusCode, 204);
    const back = await reportNew(t, 'a');
    assert.notEqual(back, id);
    await eventually(() => assert.deepEqual(events(receiver), [`new:${id}`, `new:${back}`]));
    assert.ok(receiver.received.every((r) => r.signatureValid));

    // A message is shown as text by a chat service, never as markup that pages or links.
    const marked = await reportNew(t, '<!channel> @here & @all <https://evil.example|https://cmi.internal>');
    await eventually(() => assert.equal(receiver.received.length, 3));
    assert.equal(receiver.received[2]!.json.text,
      `[cmi] New error #${marked}: RangeError: pool exhausted &lt;!channel&gt; @\u200bhere &amp; @\u200ball &lt;https://evil.example|https://cmi.internal&gt; http://127.0.0.1:3000${ERRORS}/${marked}.json`);
  });

  it('a spike sends one alert, after the error\'s new one; the cooldown holds the next back for an hour', async () => {
    // The receiver refuses the first alert: the spike, queued meanwhile, waits for it (in order per error).
    const { receiver, t } = await setUp((_r, index) => ({ status: index === 0 ? 500 : 200 }));
    let id = 0;
    for (let i = 0; i < 6; i++) id = await reportNew(t, 'spiky');
    await eventually(() => assert.equal(receiver.received.length, 1));
    await settle(200);
    assert.deepEqual(events(receiver), [`new:${id}`]);
    t.time.advance(1); // the retry of the new alert is due
    await eventually(() => assert.deepEqual(events(receiver), [`new:${id}`, `new:${id}`, `spike:${id}`]));
    const spike = receiver.received[2]!;
    const link = `http://127.0.0.1:3000${ERRORS}/${id}.json`;
    assert.equal(spike.json.text, `[cmi] Error #${id} is spiking (6 occurrences in 60 s): RangeError: pool exhausted spiky ${link}`);
    assert.deepEqual(spike.json.spike, { occurrences: 6, window_seconds: 60, threshold: 5 });
    assert.equal(receiver.received[0]!.headers['x-cmi-delivery'], receiver.received[1]!.headers['x-cmi-delivery']);

    // More in the same window, and a whole new window within the hour: no second spike alert.
    for (let i = 0; i < 10; i++) await reportNew(t, 'spiky');
    t.time.advance(61);
    for (let i = 0; i < 6; i++) await reportNew(t, 'spiky');
    await settle(200);
    assert.equal(receiver.received.length, 3);
    // The hour is over: the next spike is told.
    t.time.advance(3600);
    for (let i = 0; i < 6; i++) await reportNew(t, 'spiky');
    await eventually(() => assert.deepEqual(events(receiver).slice(3), [`spike:${id}`]));
    // Below the threshold in a new window: nothing.
    t.time.advance(3600);
    for (let i = 0; i < 5; i++) await reportNew(t, 'spiky');
    await settle(200);
    assert.equal(receiver.received.length, 4);
    await eventually(async () => assert.deepEqual((await deliveryRows(t.database)).map((r) => [r.kind, r.state]), [['new', 'delivered'], ['spike', 'delivered'], ['spike', 'delivered']]));
  });

  it('sends what is pending to the URL set when it is tried: a changed URL takes the backlog along', async () => {
    const old = await webhookReceiver(SECRET);
    await old.stop();
    const t = await createTestApp();
    const withUrl = (receiver: WebhookReceiver) =>
      buildApp({ config: loadConfig({ DATABASE_URL: t.config.databaseUrl, CMI_SPOOL_DIR: t.config.errors.spoolDirectory, ...alertEnv(receiver) }), database: t.database, clock: t.time.clock, extend: validateResponses(), logger: false });
    const before = await withUrl(old);
    cleanups.push(() => t.close());
    await reportNew(t, 'moved', before);
    await eventually(async () => assert.deepEqual((await deliveryRows(t.database)).map((r) => [r.state, Number(r.attempts), r.last_status]), [['pending', 1, null]]));
    await before.close();

    // The operator points alerts at another receiver and restarts: the backlog goes there.
    const moved = await webhookReceiver(SECRET);
    const after = await withUrl(moved);
    cleanups.push(async () => {
      await after.close();
      await moved.stop();
    });
    t.time.advance(1);
    await eventually(() => assert.equal(moved.received.length, 1));
    assert.equal(moved.received[0]!.signatureValid, true);
    await eventually(async () => assert.deepEqual(
      await t.database.db.selectFrom('webhook_deliveries').select(['state', 'url', 'attempts']).execute(),
      [{ state: 'delivered', url: moved.url, attempts: 2 }],
    ));
    assert.equal(old.received.length, 0);
  });

  it('retries a receiver that is down until it is back; every failure is logged with its status, none recorded as an error', async () => {
    const receiver = await webhookReceiver(SECRET);
    await receiver.stop();
    const t = await createTestApp();
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const config = loadConfig({ DATABASE_URL: t.config.databaseUrl, CMI_SPOOL_DIR: t.config.errors.spoolDirectory, ...alertEnv(receiver), CMI_ALERT_WEBHOOK_URL: receiver.url.replace('http://', 'http://hook:pa55word@') });
    const app = await buildApp({ config, database: t.database, clock: t.time.clock, extend: validateResponses(), logger: { level: 'warn', stream } });
    cleanups.push(async () => {
      await app.close();
      await t.close();
      await receiver.stop();
    });
    const id = await reportNew(t, 'down', app);
    await eventually(async () => assert.deepEqual((await deliveryRows(t.database)).map((r) => [r.state, Number(r.attempts), r.last_status]), [['pending', 1, null]]));
    const refused = lines.find((line) => line.code === 'CMI_WEBHOOK_FAILED');
    assert.ok(refused, JSON.stringify(lines));
    assert.equal(refused.status, null);
    assert.equal(refused.problem, 'ECONNREFUSED');
    assert.equal(refused.url, `http://127.0.0.1:${receiver.port}/…`);
    assert.equal(refused.msg, 'webhook delivery failed; will retry');

    await receiver.start();
    receiver.answer(() => ({ status: 503, body: `busy ${'z'.repeat(100_000)}` }));
    t.time.advance(1);
    await eventually(() => assert.equal(receiver.received.length, 1));
    await eventually(() => assert.ok(lines.some((line) => line.status === 503), `no 503 logged yet: ${JSON.stringify(lines)}`));
    const busy = lines.find((line) => line.status === 503)!;
    assert.equal(busy.response, `busy ${'z'.repeat(195)}`);
    assert.equal(busy.attempts, 2);
    receiver.answer(() => ({ status: 200 }));
    t.time.advance(2);
    await eventually(async () => assert.deepEqual((await deliveryRows(t.database)).map((r) => [r.state, Number(r.attempts), Number(r.last_status)]), [['delivered', 3, 200]]));
    assert.equal(receiver.received.length, 2);
    assert.equal(new Set(receiver.received.map((r) => r.headers['x-cmi-delivery'])).size, 1);
    assert.deepEqual(events(receiver), [`new:${id}`, `new:${id}`]);
    assert.equal(receiver.received[0]!.headers.authorization, `Basic ${Buffer.from('hook:pa55word').toString('base64')}`);
    const errors = await t.database.db.selectFrom('infrastructure_errors').select('id').execute();
    assert.deepEqual(errors.map((e) => Number(e.id)), [id]);
    const logged = JSON.stringify(lines);
    assert.ok(!logged.includes(SECRET) && !logged.includes('pa55word'), logged);
  });

  it('closing the app cuts a try to a slow receiver short and gives the delivery back, uncounted', async () => {
    const { receiver, t } = await setUp(() => ({ status: 200, delayMs: 60_000 }), { CMI_WEBHOOK_TIMEOUT: '600000' });
    await reportNew(t, 'slow');
    await eventually(() => assert.equal(receiver.received.length, 1));
    await t.app.close();
    const rows = await t.database.db.selectFrom('webhook_deliveries').select(['state', 'attempts', 'lease_owner', 'lease_until']).execute();
    assert.deepEqual(rows.map((r) => [r.state, Number(r.attempts), r.lease_owner, r.lease_until]), [['pending', 0, null, null]]);
  });

  it('a 410 stops every delivery to that URL', async () => {
    const { receiver, t } = await setUp(() => ({ status: 410 }));
    await reportNew(t, 'gone-1');
    await eventually(async () => assert.deepEqual((await deliveryRows(t.database)).map((r) => [r.state, Number(r.last_status)]), [['failed', 410]]));
    receiver.answer(() => ({ status: 200 }));
    await reportNew(t, 'gone-2');
    await eventually(async () => assert.deepEqual((await deliveryRows(t.database)).map((r) => [r.state, Number(r.attempts), Number(r.last_status)]), [['failed', 1, 410], ['failed', 0, 410]]));
    assert.equal(receiver.received.length, 1);
  });

  it('two processes on one database send each alert exactly once', async () => {
    const { receiver, t } = await setUp();
    const second = await t.secondProcess();
    cleanups.push(() => second.close());
    const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => reportNew(t, `two-${i}`, i % 2 === 0 ? t.app : second.app)));
    await eventually(() => assert.equal(receiver.received.length, 30), 10_000);
    await settle(300);
    assert.equal(receiver.received.length, 30);
    assert.deepEqual(receiver.received.map((r) => (r.json.infrastructure_error as { id: number }).id).sort((a, b) => a - b), [...ids].sort((a, b) => a - b));
    assert.equal(new Set(receiver.received.map((r) => r.headers['x-cmi-delivery'])).size, 30);
  });

  it('lists the deliveries in JSON and XML, paginated and filtered by state, to administrators', async () => {
    const { receiver, t } = await setUp((_r, index) => ({ status: index === 1 ? 410 : 200 }));
    const first = await reportNew(t, 'list-1');
    await eventually(async () => assert.equal((await deliveryRows(t.database)).filter((r) => r.state === 'delivered').length, 1));
    const second = await reportNew(t, 'list-2');
    await eventually(async () => assert.equal((await deliveryRows(t.database)).filter((r) => r.state === 'failed').length, 1));
    const get = (url: string, authorization = t.adminAuth) => t.app.inject({ method: 'GET', url, headers: { authorization } });
    const at = '2026-11-20T10:00:00+00:00';
    const url = `http://127.0.0.1:${receiver.port}/…`;

    const all = await get(`${DELIVERIES}.json`);
    assert.equal(all.statusCode, 200);
    assert.equal(all.headers['content-type'], JSON_TYPE);
    assert.equal(all.headers['x-total'], '2');
    assert.equal(all.headers['x-page'], '1');
    assert.equal(all.headers['x-limit'], '25');
    assert.equal(all.body, JSON.stringify([
      { delivery: { id: 1, kind: 'new', error_id: first, url, state: 'delivered', attempts: 1, last_status: 200, created_at: at, delivered_at: at, destination_id: null, last_error: null } },
      { delivery: { id: 2, kind: 'new', error_id: second, url, state: 'failed', attempts: 1, last_status: 410, created_at: at, delivered_at: null, destination_id: null, last_error: 'HTTP 410 Gone' } },
    ]));

    const paged = await get(`${DELIVERIES}.json/page/2/per_page/1`);
    assert.equal(paged.headers['x-total'], '2');
    assert.equal(paged.headers.link, `<${DELIVERIES}.json/page/1/per_page/1>; rel="first", <${DELIVERIES}.json/page/1/per_page/1>; rel="prev", <${DELIVERIES}.json/page/2/per_page/1>; rel="last"`);
    assert.deepEqual((JSON.parse(paged.body) as Array<{ delivery: { id: number } }>).map((d) => d.delivery.id), [2]);

    const failed = await get(`${DELIVERIES}.xml?state=failed`);
    assert.equal(failed.statusCode, 200);
    assert.equal(failed.headers['content-type'], XML_TYPE);
    assert.equal(failed.headers['x-total'], '1');
    assert.equal(failed.body, `${XML_DECLARATION}<deliveries type="array">
  <delivery>
    <id type="integer">2</id>
    <kind>new</kind>
    <error_id type="integer">${second}</error_id>
    <url>${url}</url>
    <state>failed</state>
    <attempts type="integer">1</attempts>
    <last_status type="integer">410</last_status>
    <created_at type="datetime">${at}</created_at>
    <delivered_at nil="true"/>
    <destination_id nil="true"/>
    <last_error>HTTP 410 Gone</last_error>
  </delivery>
</deliveries>
`);
    const pending = await get(`${DELIVERIES}.xml?state=pending`);
    assert.equal(pending.body, `${XML_DECLARATION}<deliveries type="array"/>\n`);
    assert.equal(pending.headers['x-total'], '0');

    const bad = await get(`${DELIVERIES}.json?state=lost&colour=red`);
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.body, '{"errors":{"colour":["is not a parameter of this list"]}}');
    const badState = await get(`${DELIVERIES}.json?state=lost`);
    assert.equal(badState.statusCode, 422);
    assert.equal(badState.body, '{"errors":{"state":["must be one of pending, failed, delivered"]}}');
    const forbidden = await get(`${DELIVERIES}.json`, t.aliceAuth);
    assert.equal(forbidden.statusCode, 403);
    assert.equal(forbidden.body, forbiddenJson('webhook_deliveries.read'));
    assert.equal((await t.app.inject({ method: 'GET', url: `${DELIVERIES}.json` })).statusCode, 401);
  });
});

describe('alerts across a kill -9 and the cmi deliveries command', { timeout: 600_000 }, () => {
  it('alerts queued before a kill -9 arrive from the next process once the receiver is back; list and retry from the command line', async () => {
    const receiver = await webhookReceiver(SECRET);
    await receiver.stop();
    const fresh = await freshDatabase();
    const spool = mkdtempSync(join(tmpdir(), 'cmi-spool-'));
    const env = { DATABASE_URL: fresh.url, CMI_ADMIN_PASSWORD: 'admin-password', CMI_SPOOL_DIR: spool, ...alertEnv(receiver), CMI_WEBHOOK_RETRY_BASE: '60000' };
    const auth = `Basic ${Buffer.from('admin:admin-password').toString('base64')}`;
    const servers: Array<Awaited<ReturnType<typeof startServer>>> = [];
    try {
      const first = await startServer(env);
      servers.push(first);
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${first.baseUrl}${ERRORS}.json`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(fault(`kill-${i}`)) });
        assert.equal(res.status, 201);
      }
      first.child.kill('SIGKILL');
      await new Promise((resolve) => first.child.once('exit', resolve));
      await receiver.start();
      // Their next try is a minute away (CMI_WEBHOOK_RETRY_BASE); the operator asks for it now.
      const cli = { ...env, LOG_LEVEL: 'silent' };
      const listed = await runCmi(['local', 'deliveries', 'ls', '--state', 'pending'], cli);
      assert.equal(listed.code, 0, listed.stderr);
      const lines = listed.stdout.trimEnd().split('\n');
      assert.match(lines[0]!, /^ID\s+KIND\s+ERROR\s+STATE\s+TRIES\s+STATUS\s+CREATED\s+DELIVERED\s+URL$/);
      assert.equal(lines.at(-1), '3 of 3 deliveries (page 1)');
      assert.match(lines[1]!, new RegExp(`^1\\s+new\\s+1\\s+pending\\s+[01]\\s+-\\s+\\S+\\s+-\\s+http://127\\.0\\.0\\.1:${receiver.port}/…$`));
      const onDisk = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
      try {
        // What a kill -9 leaves: pending alerts; one it was trying is leased (another process would take
        // it once the lease ran out, CMI_WEBHOOK_TIMEOUT + 30 s later) or counted and waiting for its retry.
        const rows = await deliveryRows(onDisk);
        assert.deepEqual(rows.map((r) => r.state), ['pending', 'pending', 'pending']);
        for (const row of rows) {
          const retried = await runCmi(['local', 'deliveries', 'retry', String(row.id)], cli);
          assert.equal(retried.stdout, `Delivery ${row.id} (new of error ${row.error_id}) is pending again; a running cmi serve sends it within 20 ms\n`, retried.stderr);
        }
      } finally {
        await onDisk.close();
      }
      const second = await startServer(env);
      servers.push(second);
      await eventually(() => assert.equal(receiver.received.length, 3), 10_000);
      assert.deepEqual(receiver.received.map((r) => (r.json.infrastructure_error as { id: number }).id).sort(), [1, 2, 3]);
      assert.ok(receiver.received.every((r) => r.signatureValid));
      // The receiver has each alert before the sender records its answer: wait for all three recorded
      // (a command in process asks at once; one in a process of its own took seconds to start).
      await eventually(async () => {
        const done = await runCmi(['local', 'deliveries', 'ls', '--json', '--state', 'delivered'], cli);
        assert.equal((JSON.parse(done.stdout) as unknown[]).length, 3, done.stdout);
      }, 10_000);
      const missing = await runCmi(['local', 'deliveries', 'retry', '99'], cli);
      assert.equal(missing.code, 1);
      assert.equal(missing.stderr, 'cmi: no delivery 99\n');
    } finally {
      for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
      await receiver.stop();
      await fresh.drop();
      rmSync(spool, { recursive: true, force: true });
    }
  });
});

describe('webhook settings at start-up', () => {
  it('a URL that is not http or https, or no secret with a URL, stops cmi serve with one line', async () => {
    const fresh = await freshDatabase();
    try {
      // `cmi serve` runs as its own process (test/support/cli.ts): it exits the process and handles its signals.
      const bad = await runCmiProcess(['serve', '--port', '0'], { DATABASE_URL: fresh.url, CMI_ALERT_WEBHOOK_URL: 'ftp://hooks.example.com/x', CMI_WEBHOOK_SECRET: SECRET });
      assert.equal(bad.code, 1);
      assert.equal(bad.stdout, '');
      assert.equal(bad.stderr, 'cmi: CMI_ALERT_WEBHOOK_URL must be an http or https URL of at most 2048 characters (got "ftp://hooks.example.com/…")\n');
      // What is sent to is the URL as validated: scheme and host lower-cased, surrounding spaces gone.
      const normalised = loadConfig({ DATABASE_URL: fresh.url, CMI_ALERT_WEBHOOK_URL: ' HTTPS://Hooks.Example.COM/T1/B2/Secret ', CMI_WEBHOOK_SECRET: SECRET });
      assert.equal(normalised.webhooks.alertUrl, 'https://hooks.example.com/T1/B2/Secret');
      const hidden = await runCmiProcess(['serve', '--port', '0'], { DATABASE_URL: fresh.url, CMI_REPORT_WEBHOOK_URL: 'gopher://user:hunter2@example.com/', CMI_WEBHOOK_SECRET: SECRET });
      assert.equal(hidden.stderr, 'cmi: CMI_REPORT_WEBHOOK_URL must be an http or https URL of at most 2048 characters (got "gopher://example.com/…")\n');
      const unsigned = await runCmiProcess(['serve', '--port', '0'], { DATABASE_URL: fresh.url, CMI_ALERT_WEBHOOK_URL: 'https://hooks.example.com/x', CMI_WEBHOOK_SECRET: 'short' });
      assert.equal(unsigned.code, 1);
      assert.equal(unsigned.stderr, 'cmi: CMI_WEBHOOK_SECRET must be set, at least 16 characters, when CMI_REPORT_WEBHOOK_URL or CMI_ALERT_WEBHOOK_URL is\n');
    } finally {
      await fresh.drop();
    }
  });
});
