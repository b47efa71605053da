import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';
import { ERRORS } from './support/error-reports.js';

/**
 * The Sentry endpoints against strangers and leaked keys (docs/sentry.md#limits): a body without a
 * key is read for its first line alone; header lines, items and events of an envelope are bounded;
 * a request's URL keeps no secret.
 */

const KEYS = '/sysadmin_tools/infrastructure/ingest_keys';
const JSON_TYPE = 'application/json; charset=utf-8';
const MISSING = "Missing authentication: send the ingest key's public key (the DSN's) in X-Sentry-Auth or sentry_key";

interface Key { id: number; key: string }
interface Answer { status: number; type: string | null; body: string }

/** `{"a":[0,0,...]}` of about `mebibytes` MiB and a newline, gzip as members of 1 MiB each (gunzip reads them as one stream). */
function gzipBomb(mebibytes: number): Buffer {
  const mebibyte = gzipSync('0,'.repeat(524_288));
  return Buffer.concat([gzipSync('{"a":['), ...Array.from({ length: mebibytes }, () => mebibyte), gzipSync('0]}\n{"type":"event"}\n{}\n')]);
}

/** A gzip stream cut short: inflating all of it is a 400, so an answer other than that shows it was not all inflated. */
const cut = (gzip: Buffer): Buffer => gzip.subarray(0, gzip.length - 64);

describe('Sentry endpoints: bounded work for strangers and keys, no secrets kept', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp();
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  });
  after(() => t.close());

  async function createKey(fields: Record<string, unknown> = {}): Promise<Key> {
    const res = await t.app.inject({ method: 'POST', url: `${KEYS}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: { ingest_key: { label: 'svc', ...fields } } });
    assert.equal(res.statusCode, 201, res.body);
    const { ingest_key: made } = res.json<{ ingest_key: { id: number; public_key: string } }>();
    return { id: made.id, key: made.public_key };
  }

  /** A POST over the socket. */
  async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body });
    return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
  }

  const detail = (status: number, text: string): Answer => ({ status, type: JSON_TYPE, body: JSON.stringify({ detail: text }) });

  async function errorCount(): Promise<number> {
    const res = await t.app.inject({ method: 'GET', url: `${ERRORS}.json`, headers: { authorization: t.adminAuth } });
    return res.json<unknown[]>().length;
  }

  async function deleteErrors(): Promise<void> {
    const res = await t.app.inject({ method: 'DELETE', url: `${ERRORS}.json?all=true`, headers: { authorization: t.adminAuth } });
    assert.ok([200, 204].includes(res.statusCode), res.body);
  }

  // Each test counts what it recorded alone.
  beforeEach(() => deleteErrors());

  it('an envelope without a key is read for its first line alone: a gzip bomb is 413 at once while the server answers others', async () => {
    const k = await createKey();
    const path = `/api/${k.id}/envelope/`;
    const gzip = { 'content-encoding': 'gzip' };
    const tooLong = detail(413, 'The envelope header is longer than the limit of 8192 bytes');
    const bomb = gzipBomb(19);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const [bombed, version] = await Promise.all([
      post(path, bomb, gzip),
      fetch(`${base}/version.json`, { headers: { authorization: t.adminAuth } }).then(async (res) => [res.status, (await res.text()).length > 0]),
    ]);
    delay.disable();
    assert.deepEqual(bombed, tooLong);
    assert.deepEqual(version, [200, true]);
    // Parsing that first line whole held the loop for seconds; reading 8 KiB of it takes milliseconds.
    // The bound is generous; the answers below show what was inflated, whatever the machine's speed.
    assert.ok(delay.max < 2_000_000_000, `the event loop was held ${delay.max / 1e6} ms`);
    // Cut short, the bomb is still 413: the rest was never inflated (inflating it all is 400).
    assert.deepEqual(await post(path, cut(bomb), gzip), tooLong);
    // A short header without a key: 401 before the rest is inflated; a wrong key too.
    const rest = gzipSync(`{"type":"event"}\n${JSON.stringify({ message: 'x'.repeat(100_000) })}\n`);
    assert.deepEqual(await post(path, cut(Buffer.concat([gzipSync('{"sent_at":"2026-11-20T10:00:00Z"}\n'), rest])), gzip), detail(401, MISSING));
    const wrong = `{"dsn":"http://${'0'.repeat(32)}@localhost/${k.id}"}\n`;
    assert.deepEqual(await post(path, cut(Buffer.concat([gzipSync(wrong), rest])), gzip), detail(401, 'Invalid ingest key for this project'));
    // The right key in the header: then the rest is read, and its broken end is found.
    const right = `{"dsn":"http://${k.key}@localhost/${k.id}"}\n`;
    assert.deepEqual(await post(path, cut(Buffer.concat([gzipSync(right), rest])), gzip), detail(400, 'The body is not valid gzip data'));
    // Not compressed alike: a first line beyond 8 KiB is 413 unparsed; one of 8 KiB is read.
    assert.deepEqual(await post(path, `{"a":"${'x'.repeat(8192)}"}\n{"type":"event"}\n{}\n`), tooLong);
    const padded = JSON.stringify({ dsn: `http://${k.key}@localhost/${k.id}`, pad: '' });
    const exactly = `${padded.slice(0, -2)}${'x'.repeat(8192 - padded.length)}"}`;
    assert.equal(exactly.length, 8192);
    assert.deepEqual(await post(path, `${exactly}\n{"type":"session"}\n{}\n`), { status: 200, type: JSON_TYPE, body: '{}' });
    // The DSN is read from an envelope as deflate (zlib or raw) alike; raven's base64 carries no key but in X-Sentry-Auth.
    const sessions = `${right}{"type":"session"}\n{}\n`;
    for (const compressed of [deflateSync(sessions), deflateRawSync(sessions)]) {
      assert.deepEqual(await post(path, compressed, { 'content-encoding': 'deflate' }), { status: 200, type: JSON_TYPE, body: '{}' });
    }
    assert.deepEqual(await post(path, deflateSync(sessions).toString('base64')), detail(401, MISSING));
    assert.equal(await errorCount(), 0);
  });

  it('a keyed envelope: header lines of at most 8 KiB, at most 1000 items, at most one event (as Relay counts them), else 413 and nothing recorded', async () => {
    const k = await createKey();
    const path = `/api/${k.id}/envelope/?sentry_key=${k.key}`;
    const event = JSON.stringify({ message: 'disk almost full' });
    const longHeader = JSON.stringify({ type: 'session', pad: 'x'.repeat(8192) });
    assert.deepEqual(await post(path, `{}\n${longHeader}\n{}\n`), detail(413, 'The item header is longer than the limit of 8192 bytes'));
    assert.deepEqual(await post(path, `{"pad":"${'x'.repeat(8192)}"}\n{"type":"event"}\n${event}\n`), detail(413, 'The envelope header is longer than the limit of 8192 bytes'));
    assert.deepEqual(await post(path, `{}\n${'{"type":"client_report"}\n{}\n'.repeat(1001)}`), detail(413, 'An envelope holds at most 1000 items'));
    assert.deepEqual(await post(path, `{}\n${'{"type":"client_report"}\n{}\n'.repeat(1000)}`), { status: 200, type: JSON_TYPE, body: '{}' });
    const oneEvent = detail(413, 'An envelope holds at most one event (an event, transaction or security item)');
    assert.deepEqual(await post(path, `{}\n{"type":"event"}\n${event}\n{"type":"event"}\n${event}\n`), oneEvent);
    assert.deepEqual(await post(path, `{}\n{"type":"event"}\n${event}\n{"type":"transaction"}\n{}\n`), oneEvent);
    assert.deepEqual(await post(path, `{}\n{"type":"security"}\n{}\n{"type":"event"}\n${event}\n`), oneEvent);
    assert.equal(await errorCount(), 0);
  });

  it('each event takes a token of the key: 20,000 events in one envelope are refused, not 20,000 errors on a key of 2 a minute', async () => {
    const slow = await createKey({ rate_limit_per_minute: 2 });
    const path = `/api/${slow.id}/envelope/?sentry_key=${slow.key}`;
    const item = `{"type":"event"}\n${JSON.stringify({ message: 'spam' })}\n`;
    assert.deepEqual(await post(path, `{}\n${item.repeat(20_000)}`), detail(413, 'An envelope holds at most one event (an event, transaction or security item)'));
    assert.equal(await errorCount(), 0);
    const one = await post(path, `{}\n${item}`);
    assert.equal(one.status, 200, one.body);
    assert.equal(await errorCount(), 1);
    const limited = await post(path, `{}\n${item}`);
    assert.deepEqual([limited.status, limited.body], [429, '{"detail":"Rate limit of the ingest key exceeded, try again later"}']);
    assert.equal(await errorCount(), 1);
  });

  it('a request\'s URL is kept as scheme, host and path: no user, password, query string or fragment', async () => {
    const k = await createKey();
    const urls: Array<[string, string]> = [
      ['https://deploy:hunter2@app.example.com:8443/invoices/7?token=s3cret&page=2#access_token=t0ken', 'https://app.example.com:8443/invoices/7'],
      ['http://app.example.com?api_key=s3cret', 'http://app.example.com/'],
      ['/invoices/7?token=s3cret#access_token=t0ken', '/invoices/7'],
      ['//deploy:hunter2@app.example.com/x?token=s3cret', '//app.example.com/x'],
      ['app:///index.html#access_token=t0ken', 'app:///index.html'],
    ];
    for (const [index, [url]] of urls.entries()) {
      const event = { event_id: String(index + 1).repeat(32), message: 'm', request: { url, method: 'GET', query_string: 'token=s3cret' } };
      const res = await post(`/api/${k.id}/store/?sentry_key=${k.key}`, JSON.stringify(event));
      assert.equal(res.status, 200, res.body);
    }
    const errors = (await t.app.inject({ method: 'GET', url: `${ERRORS}.json`, headers: { authorization: t.adminAuth } })).json<Array<{ infrastructure_error: { id: number } }>>();
    assert.equal(errors.length, 1);
    const occurrences = (await t.app.inject({ method: 'GET', url: `${ERRORS}/${errors[0]?.infrastructure_error.id}/occurrences.json`, headers: { authorization: t.adminAuth } }))
      .json<Array<{ occurrence: { context: { event_id: string; request: unknown } } }>>();
    assert.deepEqual(
      occurrences.map(({ occurrence }) => [occurrence.context.event_id, occurrence.context.request]).sort(),
      urls.map(([, kept], index) => [String(index + 1).repeat(32), { url: kept, method: 'GET' }]),
    );
    const rows = await t.database.db.selectFrom('error_occurrences').select('context').execute();
    assert.equal(rows.length, urls.length);
    for (const { context } of rows) assert.doesNotMatch(String(context), /s3cret|t0ken|hunter2|deploy/);
  });
});
