import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ADMIN, ALICE, createTestApp, type TestApp } from './support/app.js';

// The console's ingest keys page (docs/console.md#ingest-keys), through app.inject().

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const CONSOLE_COOKIE = /^_cmi_console=([^;\s]+);/;

async function session(t: TestApp, login = ADMIN.login, password = ADMIN.password): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: new URLSearchParams({ login, password }).toString() });
  assert.equal(res.statusCode, 303, res.body);
  return `_cmi_console=${CONSOLE_COOKIE.exec(String(res.headers['set-cookie']))![1]}`;
}

const csrfOf = (body: string): string => /name="_csrf" value="([^"]+)"/.exec(body)![1]!;

describe('the console\'s ingest keys', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ CMI_PUBLIC_URL: 'https://errors.example.com' });
  });
  afterEach(() => t.close());

  it('creates a key from the form, shows its DSN with a copy button and a snippet per language, revokes it', async () => {
    const cookie = await session(t);
    const list = await t.app.inject({ method: 'GET', url: '/console/ingest-keys', headers: { cookie } });
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /<a href="\/console\/ingest-keys">Ingest keys<\/a>/);
    assert.match(list.body, /<p class="empty">No ingest keys yet\.<\/p>/);
    const csrf = csrfOf(list.body);
    const blank = await t.app.inject({ method: 'POST', url: '/console/ingest-keys', headers: { ...FORM, cookie }, payload: new URLSearchParams({ _csrf: csrf, label: '', component: '' }).toString() });
    assert.equal(blank.statusCode, 422);
    assert.match(blank.body, /<span class="field-error" id="label-error">label can&#39;t be blank<\/span>/);
    const made = await t.app.inject({ method: 'POST', url: '/console/ingest-keys', headers: { ...FORM, cookie }, payload: new URLSearchParams({ _csrf: csrf, label: '<b>Billing</b>', component: 'billing' }).toString() });
    assert.deepEqual([made.statusCode, made.headers.location], [303, '/console/ingest-keys/1?notice=created']);
    const key = (await t.database.db.selectFrom('ingest_keys').select('public_key').executeTakeFirstOrThrow()).public_key;
    const dsn = `https://${key}@errors.example.com/1`;
    const one = await t.app.inject({ method: 'GET', url: '/console/ingest-keys/1?notice=created', headers: { cookie } });
    assert.equal(one.statusCode, 200);
    assert.ok(one.body.includes('<h1>&lt;b&gt;Billing&lt;/b&gt;</h1>'), 'the label escaped');
    assert.ok(one.body.includes(`<input id="dsn-1" readonly value="${dsn}" aria-label="DSN of &lt;b&gt;Billing&lt;/b&gt;" size="70"> <button type="button" data-copy="dsn-1">Copy</button>`), 'the DSN with its copy button');
    assert.ok(one.body.includes('Key created: give the service its DSN.'), 'the notice');
    for (const snippet of [`Sentry.init({ dsn: &#39;${dsn}&#39; });`, `sentry_sdk.init(dsn=&quot;${dsn}&quot;)`, `sentry.Init(sentry.ClientOptions{Dsn: &quot;${dsn}&quot;})`, `config.dsn = &#39;${dsn}&#39;`]) {
      assert.ok(one.body.includes(snippet), snippet);
    }
    const listed = await t.app.inject({ method: 'GET', url: '/console/ingest-keys', headers: { cookie } });
    assert.ok(listed.body.includes(`<td><a href="/console/ingest-keys/1">&lt;b&gt;Billing&lt;/b&gt;</a></td><td>billing</td><td>yes</td>`), 'the key listed');
    const revoked = await t.app.inject({ method: 'POST', url: '/console/ingest-keys/1/revoke', headers: { ...FORM, cookie }, payload: new URLSearchParams({ _csrf: csrf }).toString() });
    assert.deepEqual([revoked.statusCode, revoked.headers.location], [303, '/console/ingest-keys?notice=revoked']);
    const refused = await t.app.inject({ method: 'POST', url: `/api/1/store/?sentry_key=${key}`, payload: '{}' });
    assert.equal(refused.statusCode, 401);
    const forged = await t.app.inject({ method: 'POST', url: '/console/ingest-keys', headers: { ...FORM, cookie }, payload: new URLSearchParams({ label: 'x' }).toString() });
    assert.equal(forged.statusCode, 403);
  });

  it('is not offered to a user without ingest_keys.read, and refused (403) when asked', async () => {
    const cookie = await session(t, ALICE.login, ALICE.password);
    const users = await t.app.inject({ method: 'GET', url: '/console/users', headers: { cookie } });
    assert.ok(!users.body.includes('/console/ingest-keys'), 'no link');
    const res = await t.app.inject({ method: 'GET', url: '/console/ingest-keys', headers: { cookie } });
    assert.equal(res.statusCode, 403);
  });
});
