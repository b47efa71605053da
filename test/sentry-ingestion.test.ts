import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';
import { ERRORS } from './support/error-reports.js';
import { eventually } from './support/eventually.js';
import { fingerprint } from '../src/tracker/grouping.js';
import { trackerService } from '../src/tracker/tracker.service.js';
import { trackerRepository } from '../src/tracker/tracker.store.js';
import { auditTrailOn } from '../src/audit/audit-trail.js';

const KEYS = '/sysadmin_tools/infrastructure/ingest_keys';
const JSON_TYPE = 'application/json; charset=utf-8';
const EVENT_ID = 'fc6d8c0c43fc4630ad850ee518f1b9d0';

interface Key { id: number; key: string }

async function createKey(t: TestApp, fields: Record<string, unknown> = {}): Promise<Key> {
  const res = await t.app.inject({ method: 'POST', url: `${KEYS}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: { ingest_key: { label: 'svc', ...fields } } });
  assert.equal(res.statusCode, 201, res.body);
  const { ingest_key: made } = res.json<{ ingest_key: { id: number; public_key: string } }>();
  return { id: made.id, key: made.public_key };
}

/** A Python-style event: module beside type, frames outermost first, an ISO timestamp. */
function pythonEvent(eventId = EVENT_ID): Record<string, unknown> {
  return {
    event_id: eventId,
    timestamp: '2026-11-20T09:59:58.123456Z',
    platform: 'python',
    level: 'error',
    server_name: 'web-3',
    release: '1.4.2',
    environment: 'production',
    tags: { component: 'billing', region: 'eu' },
    user: { id: '42', email: 'someone@example.com' },
    request: { url: 'https://app.example.com/invoices', method: 'POST', data: { card: 'secret' } },
    sdk: { name: 'sentry.python', version: '1.9.10' },
    exception: {
      values: [
        { type: 'KeyError', value: "'total'", module: null, stacktrace: { frames: [{ filename: 'app/models.py', lineno: 10, function: 'total' }] } },
        {
          type: 'InvoiceError', value: 'invoice 7 has no total', module: 'app.errors',
          stacktrace: { frames: [
            { filename: 'app/views.py', abs_path: '/srv/app/views.py', lineno: 42, function: 'create' },
            { filename: 'app/invoices.py', abs_path: '/srv/app/invoices.py', lineno: 17, function: 'close' },
          ] },
        },
      ],
    },
  };
}

function envelope(header: Record<string, unknown>, items: Array<[Record<string, unknown>, string]>): string {
  return `${JSON.stringify(header)}\n${items.map(([itemHeader, payload]) => `${JSON.stringify(itemHeader)}\n${payload}`).join('\n')}\n`;
}

function send(t: TestApp, path: string, payload: string | Buffer, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: path, headers, payload });
}

async function errorsOf(t: TestApp): Promise<Array<Record<string, unknown>>> {
  const res = await t.app.inject({ method: 'GET', url: `${ERRORS}.json`, headers: { authorization: t.adminAuth } });
  return res.json<Array<{ infrastructure_error: Record<string, unknown> }>>().map((entry) => entry.infrastructure_error);
}

async function occurrencesOf(t: TestApp, id: number): Promise<Array<Record<string, unknown>>> {
  const res = await t.app.inject({ method: 'GET', url: `${ERRORS}/${id}/occurrences.json`, headers: { authorization: t.adminAuth } });
  return res.json<Array<{ occurrence: Record<string, unknown> }>>().map((entry) => entry.occurrence);
}

function assertDetail(res: LightMyRequestResponse, status: number, detail: string): void {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.headers['content-type'], JSON_TYPE);
  assert.equal(res.body, JSON.stringify({ detail }));
}

describe('Sentry ingestion: /api/:id/store/ and /api/:id/envelope/', () => {
  let t: TestApp;
  let k: Key;
  beforeEach(async () => {
    t = await createTestApp({}, { ingestUsageFlushMs: 50 });
    k = await createKey(t, { component: 'payments' });
  });
  afterEach(() => t.close());

  it('store with X-Sentry-Auth: the primary exception recorded with its module, frames innermost first, host, component and a bounded context', async () => {
    const res = await send(t, `/api/${k.id}/store/`, JSON.stringify(pythonEvent()), { 'x-sentry-auth': `Sentry sentry_key=${k.key}, sentry_version=7, sentry_client=sentry.python/1.9.10`, 'content-type': 'application/json' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.body, `{"id":"${EVENT_ID}"}`);
    const [error] = await errorsOf(t);
    const backtrace = "app/invoices.py:17:in 'close'\napp/views.py:42:in 'create'";
    assert.deepEqual(error, {
      id: 1, backtrace, counter: 1, created_at: '2026-11-20T09:59:58+00:00', error_class: 'app.errors.InvoiceError',
      fingerprint: fingerprint('app.errors.InvoiceError', backtrace, 'invoice 7 has no total'), message: 'invoice 7 has no total', reported: false, updated_at: '2026-11-20T09:59:58+00:00',
    });
    const [occurrence] = await occurrencesOf(t, 1);
    assert.deepEqual(occurrence, {
      id: 1, occurred_at: '2026-11-20T09:59:58+00:00', host: 'web-3', component: 'billing', request_id: null, message: 'invoice 7 has no total',
      context: {
        event_id: EVENT_ID, release: '1.4.2', environment: 'production', level: 'error', platform: 'python', sdk: { name: 'sentry.python', version: '1.9.10' },
        tags: { component: 'billing', region: 'eu' }, user: { id: '42' }, request: { url: 'https://app.example.com/invoices', method: 'POST' },
        exceptions: [{ type: 'KeyError', value: "'total'" }],
      },
    });
  });

  it('envelope with sentry_key in the query, gzip, no Content-Type: the event recorded, session, span and client_report items accepted and dropped', async () => {
    const event = { event_id: EVENT_ID, timestamp: 1795168790.25, platform: 'node', exception: { values: [{ type: 'TypeError', value: 'x is undefined', stacktrace: { frames: [{ filename: '/srv/node_modules/express/router.js', lineno: 5, function: 'handle' }, { filename: '/srv/app/main.js', lineno: 9, function: 'main' }] } }] } };
    const body = envelope({ event_id: EVENT_ID, sent_at: '2026-11-20T10:00:00.000Z' }, [
      [{ type: 'event' }, JSON.stringify(event)],
      [{ type: 'session' }, '{"sid":"a","status":"ok"}'],
      [{ type: 'span' }, '{}'],
      [{ type: 'client_report' }, '{"discarded_events":[]}'],
    ]);
    const res = await send(t, `/api/${k.id}/envelope/?sentry_version=7&sentry_key=${k.key}`, gzipSync(body), { 'content-encoding': 'gzip' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, `{"id":"${EVENT_ID}"}`);
    const [error] = await errorsOf(t);
    assert.deepEqual([error?.error_class, error?.message, error?.backtrace, error?.counter], ['TypeError', 'x is undefined', "/srv/app/main.js:9:in 'main'\n/srv/node_modules/express/router.js:5:in 'handle'", 1]);
    const [occurrence] = await occurrencesOf(t, 1);
    // No component tag: the key's component. The float timestamp, to the second.
    assert.deepEqual([occurrence?.component, occurrence?.host, occurrence?.occurred_at], ['payments', null, '2026-11-20T09:59:50+00:00']);
    const sessions = await send(t, `/api/${k.id}/envelope/?sentry_key=${k.key}`, envelope({}, [[{ type: 'sessions' }, '{"aggregates":[]}'], [{ type: 'attachment', length: 3 }, 'a\nb']]), { 'content-type': 'application/x-sentry-envelope' });
    assert.deepEqual([sessions.statusCode, sessions.body], [200, '{}']);
    assert.equal((await errorsOf(t)).length, 1);
  });

  it('breadcrumbs of any shape are dropped; a "breadcrumbs" key inside another value is read as sent', async () => {
    const breadcrumbs = [{ timestamp: 1795168790, category: 'http', message: 'GET /a' }, { message: 'quote " and \\ and \u00e9', data: { nested: [1, -2.5e3, true, null] } }, 'text', 7];
    const text = `{"tags":{"breadcrumbs":"kept","component":"billing"}, "breadcrumbs" : 1, "message":"m","exception":{"values":[{"type":"E","value":"v"}]},"breadcrumbs":${JSON.stringify(breadcrumbs)}}`;
    // The event's own breadcrumbs first, then the key in the tags.
    const second = `{"breadcrumbs":${JSON.stringify(breadcrumbs)},"message":"m","tags":{"component":"billing","breadcrumbs":"kept too"},"exception":{"values":[{"type":"E","value":"v"}]}}`;
    for (const body of [text, second]) {
      const res = await send(t, `/api/${k.id}/store/?sentry_key=${k.key}`, body);
      assert.equal(res.statusCode, 200, res.body);
    }
    const occurrences = await occurrencesOf(t, 1);
    assert.deepEqual(occurrences.map((occurrence) => [occurrence.message, occurrence.component, (occurrence.context as { tags?: unknown }).tags]), [
      ['v', 'billing', { component: 'billing', breadcrumbs: 'kept too' }],
      ['v', 'billing', { breadcrumbs: 'kept', component: 'billing' }],
    ]);
  });

  it('envelope authenticated by the DSN in its header alone; deflate, raw deflate and raven\'s base64 of zlib; exception as a bare list, abs_path frames', async () => {
    const dsn = `http://${k.key}@localhost/${k.id}`;
    const event = (id: string) => JSON.stringify({ event_id: id, timestamp: '2026-11-20T09:00:00.123456789Z', exception: [{ type: '*errors.errorString', value: 'boom', stacktrace: { frames: [{ abs_path: '/go/src/app/main.go', lineno: 12, function: 'main' }] } }] });
    const first = await send(t, `/api/${k.id}/envelope/`, envelope({ event_id: 'a'.repeat(32), dsn }, [[{ type: 'event' }, event('a'.repeat(32))]]), { 'content-type': 'text/plain;charset=UTF-8' });
    assert.deepEqual([first.statusCode, first.body], [200, `{"id":"${'a'.repeat(32)}"}`]);
    const auth = { 'x-sentry-auth': `Sentry sentry_key=${k.key}, sentry_version=7` };
    assert.equal((await send(t, `/api/${k.id}/store/`, deflateSync(event('b'.repeat(32))), { ...auth, 'content-encoding': 'deflate' })).statusCode, 200);
    assert.equal((await send(t, `/api/${k.id}/store/`, deflateRawSync(event('c'.repeat(32))), { ...auth, 'content-encoding': 'deflate' })).statusCode, 200);
    const raven = deflateSync(event('d'.repeat(32))).toString('base64');
    const ravenRes = await send(t, `/api/${k.id}/store/`, raven, { 'x-sentry-auth': `Sentry sentry_version=5, sentry_client=raven-ruby/3.1.2, sentry_timestamp=1, sentry_key=${k.key}`, 'content-type': 'application/octet-stream' });
    assert.deepEqual([ravenRes.statusCode, ravenRes.body], [200, `{"id":"${'d'.repeat(32)}"}`]);
    const [error] = await errorsOf(t);
    assert.deepEqual([error?.error_class, error?.message, error?.backtrace, error?.counter], ['*errors.errorString', 'boom', "/go/src/app/main.go:12:in 'main'", 4]);
    assert.equal((await occurrencesOf(t, 1))[0]?.occurred_at, '2026-11-20T09:00:00+00:00');
  });

  it('a message event (message and logentry, no exception type) is recorded as class Message; fingerprint honours {{ default }}', async () => {
    const auth = { 'x-sentry-auth': `Sentry sentry_key=${k.key}` };
    const message = { event_id: '1'.repeat(32), message: 'disk almost full', logentry: { message: 'disk almost full', params: [] }, timestamp: '2026-11-20T09:30:00', level: 'warning' };
    assert.equal((await send(t, `/api/${k.id}/store/`, JSON.stringify(message), auth)).statusCode, 200);
    const synthetic = { event_id: '2'.repeat(32), exception: { values: [{ value: 'queue stalled', mechanism: { synthetic: true } }] } };
    assert.equal((await send(t, `/api/${k.id}/store/`, JSON.stringify(synthetic), auth)).statusCode, 200);
    const grouped = { ...pythonEvent('3'.repeat(32)), fingerprint: ['{{ default }}', 'tenant-7'] };
    assert.equal((await send(t, `/api/${k.id}/store/`, JSON.stringify(grouped), auth)).statusCode, 200);
    const errors = await errorsOf(t);
    assert.deepEqual(errors.map((error) => [error.error_class, error.message, error.backtrace]).sort(), [
      ['Message', 'disk almost full', ''], ['Message', 'queue stalled', ''],
      ['app.errors.InvoiceError', 'invoice 7 has no total', "app/invoices.py:17:in 'close'\napp/views.py:42:in 'create'"],
    ]);
    const own = fingerprint('app.errors.InvoiceError', "app/invoices.py:17:in 'close'\napp/views.py:42:in 'create'", 'invoice 7 has no total');
    assert.equal(errors.find((error) => error.error_class === 'app.errors.InvoiceError')?.fingerprint, createHash('sha256').update(`sentry\n${own}\ntenant-7`).digest('hex'));
  });

  it('counts an event id once (an SDK retry), together, one after another or through another process; three events of one fault as one error with counter 3', async () => {
    const auth = { 'x-sentry-auth': `Sentry sentry_key=${k.key}` };
    const post = (app: TestApp['app'], id: string) => app.inject({ method: 'POST', url: `/api/${k.id}/store/`, headers: auth, payload: JSON.stringify(pythonEvent(id)) });
    // Arriving together, they are written in one batch.
    const together = await Promise.all(['a', 'a', 'b', 'a'].map((c) => post(t.app, c.repeat(32))));
    assert.deepEqual(together.map((res) => [res.statusCode, res.body]), ['a', 'a', 'b', 'a'].map((c) => [200, `{"id":"${c.repeat(32)}"}`]));
    for (const id of ['b', 'c', 'c'].map((c) => c.repeat(32))) assert.equal((await post(t.app, id)).statusCode, 200);
    const second = await t.secondProcess();
    try {
      assert.deepEqual([(await post(second.app, 'c'.repeat(32))).body, (await post(second.app, 'a'.repeat(32))).body], [`{"id":"${'c'.repeat(32)}"}`, `{"id":"${'a'.repeat(32)}"}`]);
    } finally {
      await second.close();
    }
    assert.deepEqual((await errorsOf(t)).map((error) => error.counter), [3]);
    assert.equal((await occurrencesOf(t, 1)).length, 3);
    // The error deleted, the same event counts again.
    assert.equal((await t.app.inject({ method: 'DELETE', url: `${ERRORS}/1.json`, headers: { authorization: t.adminAuth } })).statusCode, 204);
    assert.equal((await post(t.app, 'a'.repeat(32))).statusCode, 200);
    assert.deepEqual((await errorsOf(t)).map((error) => error.counter), [1]);
    // Event keys are kept a day after their occurrence, then retention removes them (docs/operations.md#retention).
    const keys = () => t.database.db.selectFrom('ingested_events').select('event_key').orderBy('event_key').execute();
    const retention = trackerService(trackerRepository(t.database), t.time.clock, auditTrailOn(t.database, t.time.clock, 400), t.config.errors);
    await retention.prune();
    assert.deepEqual((await keys()).map((row) => row.event_key), ['a', 'b', 'c'].map((c) => `${k.id}:${c.repeat(32)}`));
    t.time.advance(86_400 + 1);
    await retention.prune();
    assert.deepEqual(await keys(), []);
  });

  it('refuses without a key, with a wrong key, another project\'s key, a disabled or revoked key: 401/403 {"detail"}, nothing recorded', async () => {
    const other = await createKey(t);
    const body = JSON.stringify(pythonEvent());
    assertDetail(await send(t, `/api/${k.id}/store/`, body), 401, "Missing authentication: send the ingest key's public key (the DSN's) in X-Sentry-Auth or sentry_key");
    assertDetail(await send(t, `/api/${k.id}/envelope/`, envelope({}, [[{ type: 'event' }, body]])), 401, "Missing authentication: send the ingest key's public key (the DSN's) in X-Sentry-Auth or sentry_key");
    assertDetail(await send(t, `/api/${k.id}/store/?sentry_key=${'0'.repeat(32)}`, body), 401, 'Invalid ingest key for this project');
    assertDetail(await send(t, `/api/${k.id}/store/?sentry_key=${other.key}`, body), 401, 'Invalid ingest key for this project');
    assertDetail(await send(t, `/api/abc/store/?sentry_key=${k.key}`, body), 401, 'Invalid ingest key for this project');
    assertDetail(await send(t, `/api/${other.id}/envelope/`, envelope({ dsn: `http://${k.key}@localhost/${k.id}` }, [[{ type: 'event' }, body]])), 401, 'The DSN of the envelope names another project');
    await t.app.inject({ method: 'PUT', url: `${KEYS}/${k.id}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: { enabled: false } });
    assertDetail(await send(t, `/api/${k.id}/store/?sentry_key=${k.key}`, body), 403, 'The ingest key is disabled');
    assert.equal((await send(t, `/api/${other.id}/store/?sentry_key=${other.key}`, body)).statusCode, 200);
    await t.app.inject({ method: 'DELETE', url: `${KEYS}/${other.id}.json`, headers: { authorization: t.adminAuth } });
    assertDetail(await send(t, `/api/${other.id}/store/?sentry_key=${other.key}`, body), 401, 'Invalid ingest key for this project');
    assert.deepEqual((await errorsOf(t)).map((error) => error.counter), [1]);
  });

  it('a key revoked or disabled through one process is refused by another at once', async () => {
    const second = await t.secondProcess();
    try {
      const body = JSON.stringify(pythonEvent());
      const auth = { 'x-sentry-auth': `Sentry sentry_key=${k.key}` };
      assert.equal((await second.app.inject({ method: 'POST', url: `/api/${k.id}/store/`, headers: auth, payload: body })).statusCode, 200);
      await t.app.inject({ method: 'PUT', url: `${KEYS}/${k.id}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: { enabled: false } });
      assertDetail(await second.app.inject({ method: 'POST', url: `/api/${k.id}/store/`, headers: auth, payload: body }), 403, 'The ingest key is disabled');
      await t.app.inject({ method: 'PUT', url: `${KEYS}/${k.id}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: { enabled: true } });
      assert.equal((await second.app.inject({ method: 'POST', url: `/api/${k.id}/store/`, headers: auth, payload: JSON.stringify(pythonEvent('e'.repeat(32))) })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'DELETE', url: `${KEYS}/${k.id}.json`, headers: { authorization: t.adminAuth } })).statusCode, 204);
      assertDetail(await second.app.inject({ method: 'POST', url: `/api/${k.id}/store/`, headers: auth, payload: body }), 401, 'Invalid ingest key for this project');
    } finally {
      await second.close();
    }
  });

  it('bad bodies are 400, beyond the limits 413, an unknown encoding 415; never 5xx, and the server keeps serving', async () => {
    const q = `?sentry_key=${k.key}`;
    const event = JSON.stringify(pythonEvent());
    const cases: Array<[string, string | Buffer, Record<string, string>, number, string]> = [
      ['store', 'garbage!', {}, 400, 'The body is neither JSON, an envelope, nor base64 of zlib'],
      ['store', '{"event_id": ', {}, 400, 'The event is not valid JSON'],
      ['store', '[1]', {}, 400, 'The body is neither JSON, an envelope, nor base64 of zlib'],
      ['store', gzipSync(event).subarray(0, 20), { 'content-encoding': 'gzip' }, 400, 'The body is not valid gzip data'],
      ['store', Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' }, 400, 'The body is not valid gzip data'],
      ['store', Buffer.from('eJzLSM3JyQcABiwCFQ=='.slice(0, 10)), {}, 400, 'The body is not valid deflate data'],
      ['store', event, { 'content-encoding': 'br' }, 415, 'Unsupported Content-Encoding br: send identity, gzip or deflate'],
      ['envelope', '{"event_id":"x"}', {}, 400, 'The envelope header is not followed by a newline'],
      ['envelope', '{}\n{"type":"event","length":5000}\n{}', {}, 400, 'An envelope item is shorter than its length says'],
      ['envelope', '{}\n{"type":"event"}\nnot json', {}, 400, 'The event is not valid JSON'],
      // Breadcrumbs are checked, not built (docs/sentry.md#what-is-recorded): not JSON there is refused alike.
      ['store', '{"message":"m","breadcrumbs":[{"a":1},{"b":01}]}', {}, 400, 'The event is not valid JSON'],
      ['store', '{"breadcrumbs":[{"message":"tab\tin a string"}],"message":"m"}', {}, 400, 'The event is not valid JSON'],
      ['store', '{"breadcrumbs":[{"a":"\\q"}],"message":"m"}', {}, 400, 'The event is not valid JSON'],
      ['store', '{"breadcrumbs":[1,],"message":"m"}', {}, 400, 'The event is not valid JSON'],
      ['store', '{"message":"m","breadcrumbs":[{"a":1}', {}, 400, 'The event is not valid JSON'],
      ['envelope', '{}\n{"type":"event"}\n{"breadcrumbs":[],"message":"m",}', {}, 400, 'The event is not valid JSON'],
      ['envelope', '{}\nnot a header\n{}', {}, 400, 'The item header is not valid JSON'],
      ['envelope', '{}\n{"length":2}\n{}', {}, 400, 'An envelope item has no type'],
      // Letters only: read as base64, which does not inflate.
      ['envelope', 'nope\n', {}, 400, 'The body is not valid deflate data'],
      ['store', Buffer.alloc(1_048_577, 0x20), {}, 413, 'Request body is larger than the limit of 1048576 bytes'],
      ['store', gzipSync(Buffer.alloc(21 * 1_048_576, 0x20)), { 'content-encoding': 'gzip' }, 413, 'Request body is larger than the limit of 20971520 bytes'],
      ['envelope', gzipSync(`{}\n{"type":"event"}\n{"message":"${'x'.repeat(1_048_576)}"}\n`), { 'content-encoding': 'gzip' }, 413, 'Request body is larger than the limit of 1048576 bytes'],
    ];
    for (const [kind, body, headers, status, detail] of cases) {
      assertDetail(await send(t, `/api/${k.id}/${kind}/${q}`, body, headers), status, detail);
    }
    const ok = await send(t, `/api/${k.id}/store/${q}`, event);
    assert.equal(ok.statusCode, 200);
    assert.deepEqual((await errorsOf(t)).map((error) => error.counter), [1]);
  });

  it('a fault of cmi while ingesting is a 500 in cmi\'s own shape, recorded like any other', async () => {
    const faulty = await createTestApp({ CMI_FAULT_INJECTION: 'capture' });
    try {
      const key = await createKey(faulty);
      const res = await faulty.app.inject({ method: 'POST', url: `/api/${key.id}/store/?sentry_key=${key.key}`, headers: { 'x-cmi-inject-fault': '1', 'x-request-id': 'sentry-fault-1' }, payload: JSON.stringify(pythonEvent()) });
      assert.deepEqual([res.statusCode, res.headers['content-type'], res.body], [500, JSON_TYPE, '{"errors":{"base":["Internal server error (request sentry-fault-1)"]}}']);
      await faulty.app.faults.flush();
      assert.deepEqual((await errorsOf(faulty)).map((error) => [error.error_class, error.counter]), [['InjectedFault', 1]]);
    } finally {
      await faulty.close();
    }
  });

  it('beyond the key\'s rate limit: 429 with Retry-After and X-Sentry-Rate-Limits; dropped events and the last use shown with the key', async () => {
    const slow = await createKey(t, { rate_limit_per_minute: 2 });
    const path = `/api/${slow.id}/store/?sentry_key=${slow.key}`;
    assert.equal((await send(t, path, JSON.stringify(pythonEvent('a'.repeat(32))))).statusCode, 200);
    assert.equal((await send(t, path, JSON.stringify(pythonEvent('b'.repeat(32))))).statusCode, 200);
    const limited = await send(t, path, JSON.stringify(pythonEvent('c'.repeat(32))));
    assertDetail(limited, 429, 'Rate limit of the ingest key exceeded, try again later');
    assert.deepEqual([limited.headers['retry-after'], limited.headers['x-sentry-rate-limits']], ['30', '30::key']);
    t.time.advance(30);
    assert.equal((await send(t, path, JSON.stringify(pythonEvent('d'.repeat(32))))).statusCode, 200);
    await eventually(async () => {
      const key = (await t.app.inject({ method: 'GET', url: `${KEYS}/${slow.id}.json`, headers: { authorization: t.adminAuth } })).json<{ ingest_key: Record<string, unknown> }>();
      assert.deepEqual([key.ingest_key.dropped, key.ingest_key.last_used_at], [1, '2026-11-20T10:00:30+00:00']);
    });
  });

  it('CORS: the origins the key allows get their preflight and Access-Control-Allow-Origin; others 403', async () => {
    const web = await createKey(t, { allowed_origins: 'https://app.example.com' });
    const path = `/api/${web.id}/envelope/?sentry_key=${web.key}`;
    const preflight = await t.app.inject({ method: 'OPTIONS', url: path, headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    assert.equal(preflight.statusCode, 200);
    assert.deepEqual([preflight.headers['access-control-allow-origin'], preflight.headers['access-control-allow-methods'], preflight.body], ['https://app.example.com', 'POST', '']);
    const body = envelope({}, [[{ type: 'event' }, JSON.stringify(pythonEvent())]]);
    const allowed = await send(t, path, body, { origin: 'https://app.example.com', 'content-type': 'text/plain;charset=UTF-8' });
    assert.deepEqual([allowed.statusCode, allowed.headers['access-control-allow-origin'], allowed.headers.vary], [200, 'https://app.example.com', 'Origin']);
    assertDetail(await send(t, path, body, { origin: 'https://evil.example.com' }), 403, 'The ingest key does not allow this origin');
    assertDetail(await t.app.inject({ method: 'OPTIONS', url: path, headers: { origin: 'https://evil.example.com' } }), 403, 'The ingest key does not allow this origin');
    // A key that allows no origin refuses any browser.
    assertDetail(await send(t, `/api/${k.id}/envelope/?sentry_key=${k.key}`, body, { origin: 'https://app.example.com' }), 403, 'The ingest key does not allow this origin');
  });
});
