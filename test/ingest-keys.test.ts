import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';
import { forbiddenJson, NOT_FOUND_JSON } from './support/error-reports.js';
import { assertAccessDenied } from './support/http.js';

const AT = '2026-11-20T10:00:00+00:00';
const KEYS = '/sysadmin_tools/infrastructure/ingest_keys';

function call(t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, auth: string, body?: unknown, contentType = 'application/json'): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: auth };
  if (body !== undefined) headers['content-type'] = contentType;
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

const publicKeyOf = (res: LightMyRequestResponse): string => res.json<{ ingest_key: { public_key: string } }>().ingest_key.public_key;

describe('/sysadmin_tools/infrastructure/ingest_keys', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('creates a key with its DSN from the address the request reached, in JSON and XML', async () => {
    const made = await t.app.inject({ method: 'POST', url: `${KEYS}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json', host: 'cmi.example.com:8080' }, payload: { ingest_key: { label: 'Billing', component: 'billing' } } });
    assert.equal(made.statusCode, 201, made.body);
    assert.equal(made.headers.location, `${KEYS}/1.json`);
    const key = publicKeyOf(made);
    assert.match(key, /^[0-9a-f]{32}$/);
    assert.equal(made.body, `{"ingest_key":{"id":1,"label":"Billing","component":"billing","public_key":"${key}","dsn":"http://${key}@cmi.example.com:8080/1","enabled":true,"rate_limit_per_minute":1000,"allowed_origins":"","kind":"sentry","allowed_networks":"","client_certificate_sha256":null,"min_severity":3,"last_used_at":null,"dropped":0,"created_at":"${AT}","updated_at":"${AT}"}}`);
    const xml = await t.app.inject({ method: 'GET', url: `${KEYS}/1.xml`, headers: { authorization: t.adminAuth, host: 'localhost' } });
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>
<ingest_key>
  <id type="integer">1</id>
  <label>Billing</label>
  <component>billing</component>
  <public_key>${key}</public_key>
  <dsn>http://${key}@localhost/1</dsn>
  <enabled type="boolean">true</enabled>
  <rate_limit_per_minute type="integer">1000</rate_limit_per_minute>
  <allowed_origins></allowed_origins>
  <kind>sentry</kind>
  <allowed_networks></allowed_networks>
  <client_certificate_sha256 nil="true"/>
  <min_severity type="integer">3</min_severity>
  <last_used_at nil="true"/>
  <dropped type="integer">0</dropped>
  <created_at type="datetime">${AT}</created_at>
  <updated_at type="datetime">${AT}</updated_at>
</ingest_key>
`);
    const row = await t.database.db.selectFrom('ingest_keys').selectAll().executeTakeFirstOrThrow();
    assert.deepEqual({ ...row, id: Number(row.id) }, { id: 1, label: 'Billing', component: 'billing', public_key: key, enabled: 1, rate_limit_per_minute: 1000, allowed_origins: '', kind: 'sentry', allowed_networks: '', client_certificate_sha256: null, min_severity: 3, created_at: '2026-11-20T10:00:00.000Z', updated_at: '2026-11-20T10:00:00.000Z' });
  });

  it('builds the DSN from CMI_PUBLIC_URL when it is set, path included', async () => {
    const own = await createTestApp({ CMI_PUBLIC_URL: 'https://errors.example.com/cmi/' });
    try {
      const made = await call(own, 'POST', `${KEYS}.json`, own.adminAuth, { label: 'Web' });
      assert.equal(made.json<{ ingest_key: { dsn: string } }>().ingest_key.dsn, `https://${publicKeyOf(made)}@errors.example.com/cmi/1`);
    } finally {
      await own.close();
    }
  });

  it('lists keys paginated like users, edits wrapped or not (JSON or XML), revokes', async () => {
    for (const label of ['A', 'B', 'C']) await call(t, 'POST', `${KEYS}.json`, t.adminAuth, { ingest_key: { label } });
    const page = await call(t, 'GET', `${KEYS}.json?per_page=2&page=2`, t.adminAuth);
    assert.deepEqual([page.statusCode, page.headers['x-total'], page.headers['x-limit'], page.headers['x-page']], [200, '3', '2', '2']);
    assert.deepEqual(page.json<Array<{ ingest_key: { id: number; label: string } }>>().map((entry) => [entry.ingest_key.id, entry.ingest_key.label]), [[3, 'C']]);

    assert.equal((await call(t, 'PUT', `${KEYS}/1.json`, t.adminAuth, { label: 'A+', rate_limit_per_minute: '60', allowed_origins: ['https://App.example.com', 'http://localhost:3000'] })).statusCode, 204);
    const xml = '<ingest_key><enabled>false</enabled><component>web</component></ingest_key>';
    assert.equal((await call(t, 'PUT', `${KEYS}/1.xml`, t.adminAuth, xml, 'application/xml')).statusCode, 204);
    const one = (await call(t, 'GET', `${KEYS}/1.json`, t.adminAuth)).json<{ ingest_key: Record<string, unknown> }>();
    assert.deepEqual([one.ingest_key.label, one.ingest_key.component, one.ingest_key.enabled, one.ingest_key.rate_limit_per_minute, one.ingest_key.allowed_origins],
      ['A+', 'web', false, 60, 'https://app.example.com http://localhost:3000']);

    assert.equal((await call(t, 'DELETE', `${KEYS}/1.json`, t.adminAuth)).statusCode, 204);
    const gone = await call(t, 'GET', `${KEYS}/1.json`, t.adminAuth);
    assert.deepEqual([gone.statusCode, gone.body], [404, NOT_FOUND_JSON]);
    assert.equal((await call(t, 'DELETE', `${KEYS}/1.json`, t.adminAuth)).statusCode, 404);
    assert.equal((await call(t, 'PUT', `${KEYS}/1.json`, t.adminAuth, { label: 'x' })).statusCode, 404);
  });

  it('names every bad field in one 422 and stores nothing', async () => {
    const res = await call(t, 'POST', `${KEYS}.json`, t.adminAuth, { ingest_key: { component: 7, enabled: 'yes', rate_limit_per_minute: 0, allowed_origins: 'https://a.example.com/path' } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, '{"errors":{"label":["can\'t be blank"],"component":["must be a string"],"enabled":["must be true or false"],"rate_limit_per_minute":["must be an integer from 1 to 1000000"],"allowed_origins":["must hold origins such as https://app.example.com (scheme, host and port only) or *"]}}');
    assert.deepEqual(await t.database.db.selectFrom('ingest_keys').select('id').execute(), []);
    const logs = await call(t, 'POST', `${KEYS}.json`, t.adminAuth, { ingest_key: { label: 'L', kind: 'graylog', allowed_networks: '10.0.0.0/33 host', client_certificate_sha256: 'ab', min_severity: 'loud' } });
    assert.equal(logs.body, JSON.stringify({ errors: {
      kind: ['must be one of sentry, otlp, journald, syslog'],
      allowed_networks: ['must hold networks such as 192.0.2.0/24 or 2001:db8::/32 (or single addresses)'],
      client_certificate_sha256: ['must be the SHA-256 of a certificate: 64 hexadecimal characters (colons allowed)'],
      min_severity: ['must be a severity from 0 to 7, or one of emerg, alert, crit, err, warning, notice, info, debug'],
    } }));
  });

  it('takes a client certificate for syslog keys only, made or changed', async () => {
    const certificate = 'ab'.repeat(32);
    const refusal = JSON.stringify({ errors: { client_certificate_sha256: ['is for syslog keys only (cmi serves HTTP: a TLS proxy in front of it holds the client certificates)'] } });
    const journald = await call(t, 'POST', `${KEYS}.json`, t.adminAuth, { ingest_key: { label: 'J', kind: 'journald', client_certificate_sha256: certificate } });
    assert.deepEqual([journald.statusCode, journald.body], [422, refusal]);
    const otlp = await call(t, 'POST', `${KEYS}.json`, t.adminAuth, { ingest_key: { label: 'O', kind: 'otlp' } });
    const id = (JSON.parse(otlp.body) as { ingest_key: { id: number } }).ingest_key.id;
    const changed = await call(t, 'PUT', `${KEYS}/${id}.json`, t.adminAuth, { ingest_key: { client_certificate_sha256: certificate } });
    assert.deepEqual([changed.statusCode, changed.body], [422, refusal]);
    assert.equal((await call(t, 'PUT', `${KEYS}/${id}.json`, t.adminAuth, { ingest_key: { client_certificate_sha256: null } })).statusCode, 204);
  });

  it('keeps a log source\'s kind, networks, client certificate and threshold; the kind never changes', async () => {
    const fingerprint = 'AB:CD:'.repeat(14) + 'AB:CD:EF:01';
    const made = await call(t, 'POST', `${KEYS}.json`, t.adminAuth, { ingest_key: { label: 'Hypervisors', kind: 'syslog', allowed_networks: ['192.0.2.0/24', '2001:DB8::/32', '198.51.100.7'], client_certificate_sha256: fingerprint, min_severity: 'warning' } });
    assert.equal(made.statusCode, 201, made.body);
    const key = (JSON.parse(made.body) as { ingest_key: Record<string, unknown> & { id: number } }).ingest_key;
    assert.deepEqual([key.kind, key.allowed_networks, key.client_certificate_sha256, key.min_severity],
      ['syslog', '192.0.2.0/24 2001:db8::/32 198.51.100.7/32', fingerprint.replaceAll(':', '').toLowerCase(), 4]);
    const changed = await call(t, 'PUT', `${KEYS}/${key.id}.json`, t.adminAuth, { kind: 'otlp' });
    assert.equal(changed.body, JSON.stringify({ errors: { kind: ['cannot change: make a new key'] } }));
    assert.equal((await call(t, 'PUT', `${KEYS}/${key.id}.json`, t.adminAuth, { min_severity: 2, allowed_networks: '', client_certificate_sha256: null })).statusCode, 204);
    const row = await t.database.db.selectFrom('ingest_keys').select(['kind', 'allowed_networks', 'client_certificate_sha256', 'min_severity']).where('id', '=', Number(key.id)).executeTakeFirstOrThrow();
    assert.deepEqual({ ...row, min_severity: Number(row.min_severity) }, { kind: 'syslog', allowed_networks: '', client_certificate_sha256: null, min_severity: 2 });
  });

  it('answers 403 to a user without the ingest_keys permissions, 401 without credentials', async () => {
    await call(t, 'POST', `${KEYS}.json`, t.adminAuth, { label: 'A' });
    for (const [method, url, body, needs] of [
      ['GET', `${KEYS}.json`, undefined, 'ingest_keys.read'], ['POST', `${KEYS}.json`, { label: 'B' }, 'ingest_keys.create'], ['GET', `${KEYS}/1.json`, undefined, 'ingest_keys.read'],
      ['PUT', `${KEYS}/1.json`, { label: 'C' }, 'ingest_keys.update'], ['DELETE', `${KEYS}/1.json`, undefined, 'ingest_keys.delete'],
    ] as const) {
      const res = await call(t, method, url, t.aliceAuth, body);
      assert.deepEqual([res.statusCode, res.body], [403, forbiddenJson(needs)], `${method} ${url}`);
    }
    assertAccessDenied(await t.app.inject({ method: 'GET', url: `${KEYS}.json` }));
  });

  it('a key is write-only: as a Basic password, an API key or a bearer token it authenticates nothing (401)', async () => {
    const key = publicKeyOf(await call(t, 'POST', `${KEYS}.json`, t.adminAuth, { label: 'A' }));
    for (const authorization of [t.basic('admin', key), t.basic('admin@example.com', key), t.basic(key, key), `Bearer ${key}`, `Sentry sentry_key=${key}`]) {
      assertAccessDenied(await t.app.inject({ method: 'GET', url: '/version.json', headers: { authorization } }));
      assertAccessDenied(await t.app.inject({ method: 'GET', url: '/sysadmin_tools/infrastructure/errors.json', headers: { authorization } }));
    }
    const sentryAuth = await t.app.inject({ method: 'GET', url: `/sysadmin_tools/infrastructure/errors.json?sentry_key=${key}`, headers: { 'x-sentry-auth': `Sentry sentry_key=${key}` } });
    assertAccessDenied(sentryAuth);
  });
});
