import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { CompiledQuery, Kysely, KyselyPlugin } from 'kysely';
import { frame } from '../src/console/errors-item-page.js';
import { PERMISSIONS } from '../src/roles/permissions.js';
import { ADMIN, ALICE, createTestApp, type TestApp } from './support/app.js';

// The console's security model (docs/console.md#security), through app.inject(); the browser's view of
// the same pages is test/console-browser.test.ts.

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";
const CONSOLE_COOKIE = /^_cmi_console=([^;\s]+); Path=\/console; HttpOnly; SameSite=Strict$/;
const CLEARED = '_cmi_console=; Max-Age=0; Path=/console; HttpOnly; SameSite=Strict';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const XSS = '<img src=x onerror=alert(1)>';
/** Whether the users service filters its list yet (it does from branch groups on; docs/console.md#users). */

function signIn(t: TestApp, login: string, password: string, extra: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: new URLSearchParams({ login, password, ...extra }).toString() });
}

/** Signs in; the Cookie header that carries the console session. */
async function session(t: TestApp, login = ADMIN.login, password = ADMIN.password): Promise<string> {
  const res = await signIn(t, login, password);
  assert.equal(res.statusCode, 303, res.body);
  const match = CONSOLE_COOKIE.exec(String(res.headers['set-cookie']));
  assert.ok(match, String(res.headers['set-cookie']));
  return `_cmi_console=${match[1]}`;
}

/** The CSRF token a page's forms carry. */
function csrfOf(body: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(body);
  assert.ok(match, 'no CSRF field on the page');
  return match[1] as string;
}

async function reportError(t: TestApp, fields: Record<string, string | number>): Promise<number> {
  const res = await t.app.inject({
    method: 'POST', url: '/sysadmin_tools/infrastructure/errors.json', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: fields,
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
}

describe('the operator console', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '3' });
  });
  afterEach(() => t.close());

  it('sends a browser at / to /console, and answers API clients at / as before (401 without credentials, 404 with)', async () => {
    const browser = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    assert.equal(browser.statusCode, 302);
    assert.equal(browser.headers.location, '/console');
    for (const accept of ['*/*', 'application/json', 'application/xml', 'application/json, text/html']) {
      const anonymous = await t.app.inject({ method: 'GET', url: '/', headers: { accept } });
      assert.equal(anonymous.statusCode, 401, accept);
      const known = await t.app.inject({ method: 'GET', url: '/', headers: { accept, authorization: t.adminAuth } });
      assert.equal(known.statusCode, 404, accept);
      assert.equal(known.headers['content-security-policy'], undefined);
    }
  });

  it('signs in with login or email into a cookie of its own (HttpOnly, SameSite=Strict, /console only) that the API does not accept', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/console/sign-in' });
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['content-security-policy'], CSP);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(page.body, /<label for="login">Login or email<\/label>/);

    const res = await signIn(t, ADMIN.email, ADMIN.password, { next: '/console/users?page=1' });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/console/users?page=1');
    const token = CONSOLE_COOKIE.exec(String(res.headers['set-cookie']))?.[1] as string;
    const api = await t.app.inject({ method: 'GET', url: '/users.json', headers: { cookie: `_cmi_console=${token}` } });
    assert.equal(api.statusCode, 401);
    // And the API's cookie does not open the console.
    const viaApiCookie = await t.app.inject({ method: 'GET', url: '/console/users', headers: { cookie: `_cmi_session=${token}` } });
    assert.equal(viaApiCookie.statusCode, 303);
    assert.equal(viaApiCookie.headers.location, '/console/sign-in?next=%2Fconsole%2Fusers');
  });

  it('never sends anyone after sign-in to another site', async () => {
    for (const next of ['//evil.example/', 'https://evil.example/', '/\\evil.example', '/users.json', '/console\n', '/console/../users.json', '/console//evil.example']) {
      const res = await signIn(t, ADMIN.login, ADMIN.password, { next });
      assert.equal(res.headers.location, '/console', next);
    }
  });

  it('signs in from a link whose next holds characters no Location header may carry (a 500 before)', async () => {
    for (const next of ['/console/errors?q=\u0100', '/console/errors?q=caf\u00e9', '/console/\u0001', '/console/\u007f']) {
      const form = await t.app.inject({ method: 'GET', url: `/console/sign-in?next=${encodeURIComponent(next)}` });
      assert.match(form.body, /<input type="hidden" name="next" value="\/console">/, JSON.stringify(next));
      const res = await signIn(t, ADMIN.login, ADMIN.password, { next });
      assert.equal(res.statusCode, 303, JSON.stringify(next));
      assert.equal(res.headers.location, '/console', JSON.stringify(next));
    }
    const percentEncoded = await signIn(t, ADMIN.login, ADMIN.password, { next: '/console/errors?q=caf%C3%A9' });
    assert.equal(percentEncoded.headers.location, '/console/errors?q=caf%C3%A9');
  });

  it('reads forms only: the sign-in form, open to anyone, parses no JSON or XML body (the API\'s readers and limit)', async () => {
    const bodies: Array<[string, string]> = [
      ['application/json', JSON.stringify({ login: ADMIN.login, password: ADMIN.password, padding: 'x'.repeat(500_000) })],
      ['application/xml', `<session><login>admin</login><padding>${'x'.repeat(500_000)}</padding></session>`],
      ['text/plain', 'login=admin'],
    ];
    for (const [type, payload] of bodies) {
      const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: { 'content-type': type }, payload });
      assert.equal(res.statusCode, 415, type);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', type);
      assert.equal(res.headers['content-security-policy'], CSP, type);
      assert.match(res.body, /<p>The request could not be read<\/p>/, type);
      assert.equal(res.headers['set-cookie'], undefined, type);
    }
    // The API still reads its JSON.
    await reportError(t, { error_class: 'StillRead', message: 'json' });
  });

  it('lets no browser keep a page (no-store, no ETag), the new API key\'s least of all; the assets may be revalidated', async () => {
    await reportError(t, { error_class: 'Cached', message: 'secret in a message' });
    const cookie = await session(t);
    for (const url of ['/console/sign-in', '/console/errors', '/console/errors/1', '/console/users', `/console/users/${t.alice.id}`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: { cookie } });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['cache-control'], 'no-store', url);
      assert.equal(res.headers.etag, undefined, url);
    }
    const page = await t.app.inject({ method: 'GET', url: `/console/users/${t.alice.id}`, headers: { cookie } });
    const key = await t.app.inject({ method: 'POST', url: `/console/users/${t.alice.id}/api-key`, headers: { ...FORM, cookie }, payload: `_csrf=${csrfOf(page.body)}&current_password=${ADMIN.password}` });
    assert.equal(key.statusCode, 200);
    assert.match(key.body, /<input id="api-key" readonly value="[^"]+"/);
    assert.equal(key.headers['cache-control'], 'no-store');
    const css = await t.app.inject({ method: 'GET', url: '/console/assets/console-css' });
    assert.equal(css.headers['cache-control'], 'max-age=0, private, must-revalidate');
    assert.match(String(css.headers.etag), /^W\/"/);
  });

  it('lists a user\'s API keys, adds a named one shown once beside the others, and revokes one (which then fails, and ends the user\'s sessions)', async () => {
    const cookie = await session(t);
    const aliceCookie = await session(t, ALICE.login, ALICE.password);
    const url = `/console/users/${t.alice.id}`;
    const before = await t.app.inject({ method: 'GET', url, headers: { cookie } });
    assert.match(before.body, /<h2 id="keys-heading">API keys<\/h2>\n<p class="muted">No API keys.<\/p>/);
    // The description is required, and refused beside its field with what was typed kept out.
    const empty = await t.app.inject({ method: 'POST', url: `${url}/api-keys`, headers: { ...FORM, cookie }, payload: `_csrf=${csrfOf(before.body)}&description=` });
    assert.equal(empty.statusCode, 422);
    assert.match(empty.body, /id="description-error"/);
    const added = await t.app.inject({ method: 'POST', url: `${url}/api-keys`, headers: { ...FORM, cookie }, payload: `_csrf=${csrfOf(before.body)}&description=${encodeURIComponent(`billing ${XSS}`)}&current_password=${ADMIN.password}` });
    assert.equal(added.statusCode, 200);
    assert.equal(added.headers['cache-control'], 'no-store');
    const key = /<input id="api-key" readonly value="([0-9a-f]{64})"/.exec(added.body)?.[1];
    assert.ok(key, 'the new key is shown');
    assert.match(added.body, /shown only this once\. The other keys keep working\./);
    assert.ok(added.body.includes('<td>billing &lt;img src=x onerror=alert(1)&gt;</td>'), 'the description is listed, escaped');
    assert.equal(added.body.includes(XSS), false);
    const stored = await t.database.db.selectFrom('user_api_keys').select(['id', 'user_id', 'description', 'key_hash']).execute();
    assert.deepEqual(stored.map((row) => [Number(row.user_id), row.description]), [[t.alice.id, `billing ${XSS}`]]);
    assert.equal(stored[0]!.key_hash.includes(key), false);
    // The key works at once, and the page never shows it again.
    assert.equal((await t.app.inject({ url: '/version.json', headers: { authorization: t.basic(ALICE.login, key) } })).statusCode, 200);
    const after = await t.app.inject({ method: 'GET', url, headers: { cookie } });
    assert.equal(after.body.includes(key), false);
    const keyId = Number(stored[0]!.id);
    assert.ok(after.body.includes(`action="/console/users/${t.alice.id}/api-keys/${keyId}/revoke"`), 'a revoke button for the key');
    // Revoking: 303 back to the user with a notice; the key fails from the next request; Alice's session ended.
    const revoked = await t.app.inject({ method: 'POST', url: `${url}/api-keys/${keyId}/revoke`, headers: { ...FORM, cookie }, payload: `_csrf=${csrfOf(after.body)}` });
    assert.deepEqual([revoked.statusCode, revoked.headers.location], [303, `/console/users/${t.alice.id}?notice=key_revoked`]);
    assert.equal((await t.app.inject({ url: '/version.json', headers: { authorization: t.basic(ALICE.login, key) } })).statusCode, 401);
    assert.equal((await t.database.db.selectFrom('user_api_keys').select('id').execute()).length, 0);
    assert.equal((await t.app.inject({ method: 'GET', url: '/console/errors', headers: { cookie: aliceCookie } })).statusCode, 303);
    const trail = await t.database.db.selectFrom('audit_events').select(['actor_id', 'credential', 'action', 'target_id']).where('action', 'like', 'user.api_key.%').orderBy('id').execute();
    assert.deepEqual(trail.map((row) => [Number(row.actor_id), row.credential, row.action, Number(row.target_id)]), [
      [t.admin.id, 'session', 'user.api_key.create', t.alice.id],
      [t.admin.id, 'session', 'user.api_key.revoke', t.alice.id],
    ]);
    // Without the form's token nothing happens.
    const forged = await t.app.inject({ method: 'POST', url: `${url}/api-keys`, headers: { ...FORM, cookie }, payload: 'description=forged' });
    assert.equal(forged.statusCode, 403);
    assert.equal((await t.database.db.selectFrom('user_api_keys').select('id').execute()).length, 0);
  });

  it('shows an ordinary user its own keys, never another user\'s, and revoking its own ends its session', async () => {
    const cookie = await session(t, ALICE.login, ALICE.password);
    const own = await t.app.inject({ method: 'GET', url: `/console/users/${t.alice.id}`, headers: { cookie } });
    assert.match(own.body, /<h2 id="keys-heading">API keys<\/h2>/);
    const added = await t.app.inject({ method: 'POST', url: `/console/users/${t.alice.id}/api-keys`, headers: { ...FORM, cookie }, payload: `_csrf=${csrfOf(own.body)}&description=laptop&current_password=${ALICE.password}` });
    assert.equal(added.statusCode, 200);
    const [row] = await t.database.db.selectFrom('user_api_keys').select('id').execute();
    const others = await t.app.inject({ method: 'POST', url: `/console/users/${t.admin.id}/api-keys`, headers: { ...FORM, cookie }, payload: `_csrf=${csrfOf(own.body)}&description=theirs&current_password=${ALICE.password}` });
    assert.equal(others.statusCode, 403);
    const revoked = await t.app.inject({ method: 'POST', url: `/console/users/${t.alice.id}/api-keys/${Number(row!.id)}/revoke`, headers: { ...FORM, cookie }, payload: `_csrf=${csrfOf(own.body)}` });
    assert.deepEqual([revoked.statusCode, revoked.headers.location, revoked.headers['set-cookie']], [303, '/console/sign-in', CLEARED]);
    assert.equal((await t.database.db.selectFrom('user_api_keys').select('id').execute()).length, 0);
  });

  it('serves its icon without credentials, also at /favicon.ico (a 401 there makes a browser prompt for a login), cached a day; every page links it under the CSP', async () => {
    const svg = readFileSync(new URL('../static/console/favicon.svg', import.meta.url), 'utf8');
    for (const url of ['/favicon.ico', '/console/assets/favicon']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { accept: 'image/avif,image/webp,*/*' } });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['content-type'], 'image/svg+xml', url);
      assert.equal(res.headers['cache-control'], 'public, max-age=86400', url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
      assert.equal(res.headers['www-authenticate'], undefined, url);
      assert.equal(res.body, svg, url);
      const again = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': String(res.headers.etag) } });
      assert.deepEqual([again.statusCode, again.headers['cache-control'], again.body], [304, 'public, max-age=86400', ''], url);
    }
    assert.equal((await t.app.inject({ method: 'GET', url: '/favicon.png' })).statusCode, 406);
    const signIn = await t.app.inject({ method: 'GET', url: '/console/sign-in' });
    assert.match(signIn.body, /<link rel="icon" href="\/console\/assets\/favicon" type="image\/svg\+xml">/);
    // Its own origin's image: the policy's img-src 'self' admits it, and nothing else changed.
    assert.equal(signIn.headers['content-security-policy'], "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'");
    const cookie = await session(t);
    assert.match((await t.app.inject({ method: 'GET', url: '/console/errors', headers: { cookie } })).body, /<link rel="icon" href="\/console\/assets\/favicon"/);
  });

  it('refuses a wrong password with the form again and no cookie, and puts the form under the API\'s lockout (an API key is no password here)', async () => {
    const key = await t.app.inject({ method: 'POST', url: `/users/${t.alice.id}/make_new_api_key.json`, headers: { authorization: t.adminAuth } });
    const apiKey = (JSON.parse(key.body) as { user: { api_key: string } }).user.api_key;
    const withKey = await signIn(t, ALICE.login, apiKey);
    assert.equal(withKey.statusCode, 401);
    assert.equal(withKey.headers['set-cookie'], undefined);
    assert.match(withKey.body, /<p class="error" role="alert">The login or the password is wrong, or the account is not active.<\/p>/);
    assert.match(withKey.body, /value="alice" autofocus/);
    await signIn(t, ALICE.login, 'wrong-1');
    await signIn(t, ALICE.login, 'wrong-2');
    const locked = await signIn(t, ALICE.login, ALICE.password);
    assert.equal(locked.statusCode, 429);
    assert.equal(locked.headers['retry-after'], '900');
    assert.equal(locked.headers['set-cookie'], undefined);
    // The same counters as HTTP Basic: the API refuses the right password now too.
    const api = await t.app.inject({ method: 'GET', url: '/version.json', headers: { authorization: t.aliceAuth } });
    assert.equal(api.statusCode, 429);
  });

  it('shows an error message as text, never as markup', async () => {
    const id = await reportError(t, { error_class: 'Xss<b>', message: XSS, backtrace: `src/a.ts:1:in '${XSS}'` });
    const cookie = await session(t);
    for (const url of ['/console/errors', `/console/errors/${id}`, `/console/errors/${id}/delete`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: { cookie } });
      assert.equal(res.statusCode, 200, url);
      assert.ok(!res.body.includes('<img'), url);
      assert.ok(!res.body.includes('<b>'), url);
      assert.ok(res.body.includes('&lt;img src=x onerror=alert(1)&gt;'), url);
    }
  });

  it('refuses a POST without the session\'s CSRF token, or from another site, and changes nothing', async () => {
    const id = await reportError(t, { error_class: 'Kept', message: 'kept' });
    const cookie = await session(t);
    const other = await session(t);
    const page = await t.app.inject({ method: 'GET', url: `/console/errors/${id}/delete`, headers: { cookie } });
    const csrf = csrfOf(page.body);
    const otherCsrf = csrfOf((await t.app.inject({ method: 'GET', url: '/console/errors', headers: { cookie: other } })).body);
    assert.notEqual(csrf, otherCsrf);
    const attempts: Array<[string, Record<string, string>, string]> = [
      ['no token', {}, ''],
      ['another session\'s token', {}, `_csrf=${otherCsrf}`],
      ['a token one character off', {}, `_csrf=${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`],
      ['another origin', { origin: 'https://evil.example' }, `_csrf=${csrf}`],
      ['a cross-site fetch', { 'sec-fetch-site': 'cross-site' }, `_csrf=${csrf}`],
      ['a null origin', { origin: 'null' }, `_csrf=${csrf}`],
    ];
    for (const [what, headers, payload] of attempts) {
      const res = await t.app.inject({ method: 'POST', url: `/console/errors/${id}/delete`, headers: { ...FORM, cookie, ...headers }, payload });
      assert.equal(res.statusCode, 403, what);
      assert.equal(res.headers['content-security-policy'], CSP, what);
      assert.match(res.body, /This form did not come from a page of this console/, what);
    }
    const still = await t.app.inject({ method: 'GET', url: `/sysadmin_tools/infrastructure/errors/${id}.json`, headers: { authorization: t.adminAuth } });
    assert.equal(still.statusCode, 200);
    const done = await t.app.inject({
      method: 'POST', url: `/console/errors/${id}/delete`, headers: { ...FORM, cookie, origin: 'http://localhost:80', 'sec-fetch-site': 'same-origin' }, payload: `_csrf=${csrf}`,
    });
    assert.equal(done.statusCode, 303);
    assert.equal(done.headers.location, '/console/errors?notice=deleted&count=1');
    const gone = await t.app.inject({ method: 'GET', url: `/sysadmin_tools/infrastructure/errors/${id}.json`, headers: { authorization: t.adminAuth } });
    assert.equal(gone.statusCode, 404);
  });

  it('keeps a regular user from the errors, and shows it its own account only', async () => {
    await reportError(t, { error_class: 'Secret', message: 'admins only' });
    const cookie = await session(t, ALICE.login, ALICE.password);
    const home = await t.app.inject({ method: 'GET', url: '/console', headers: { cookie } });
    assert.equal(home.headers.location, '/console/users');
    for (const url of ['/console/errors', '/console/errors/1', '/console/users/new', `/console/users/${t.admin.id}`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: { cookie } });
      assert.equal(res.statusCode, 403, url);
      assert.ok(!res.body.includes('admins only'), url);
      assert.match(res.body, /<h1>Not allowed<\/h1>/, url);
    }
    const users = await t.app.inject({ method: 'GET', url: '/console/users', headers: { cookie } });
    assert.equal(users.headers['x-total'], '1');
    assert.ok(users.body.includes('>alice</a>'));
    assert.ok(!users.body.includes('>admin</a>'));
  });

  it('ends the session on sign-out: the old cookie opens nothing, and the next sign-in returns to the page asked for', async () => {
    const cookie = await session(t);
    const page = await t.app.inject({ method: 'GET', url: '/console/users', headers: { cookie } });
    const out = await t.app.inject({ method: 'POST', url: '/console/sign-out', headers: { ...FORM, cookie }, payload: `_csrf=${csrfOf(page.body)}` });
    assert.equal(out.statusCode, 303);
    assert.equal(out.headers.location, '/console/sign-in?signed_out=1');
    assert.equal(out.headers['set-cookie'], CLEARED);
    const after = await t.app.inject({ method: 'GET', url: '/console/errors?q=disk', headers: { cookie } });
    assert.equal(after.statusCode, 303);
    assert.equal(after.headers.location, '/console/sign-in?ended=1&next=%2Fconsole%2Ferrors%3Fq%3Ddisk');
    assert.equal(after.headers['set-cookie'], CLEARED);
    const form = await t.app.inject({ method: 'GET', url: after.headers.location });
    assert.match(form.body, /<input type="hidden" name="next" value="\/console\/errors\?q=disk">/);
    assert.match(form.body, /Your session has ended/);
  });

  it('says when something failed, with the request id, and records the fault; a path that is no page is a 404 page', async () => {
    const faulty = await createTestApp({ CMI_FAULT_INJECTION: 'capture' });
    try {
      const cookie = await session(faulty);
      const res = await faulty.app.inject({ method: 'GET', url: '/console/users', headers: { cookie, 'x-cmi-inject-fault': '1', 'x-request-id': 'console-fault-1' } });
      assert.equal(res.statusCode, 500);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.headers['content-security-policy'], CSP);
      assert.match(res.body, /<h1>Something failed<\/h1>\n<div class="error" role="alert"><p>Internal server error \(request console-fault-1\)<\/p><\/div>/);
      await faulty.app.faults.flush();
      const recorded = await faulty.app.inject({ method: 'GET', url: `${'/sysadmin_tools/infrastructure/errors'}.json?error_class=InjectedFault`, headers: { authorization: faulty.adminAuth } });
      assert.equal((JSON.parse(recorded.body) as unknown[]).length, 1);
      const occurrences = await faulty.app.inject({
        method: 'GET', url: `/sysadmin_tools/infrastructure/errors/${(JSON.parse(recorded.body) as Array<{ infrastructure_error: { id: number } }>)[0]!.infrastructure_error.id}/occurrences.json`, headers: { authorization: faulty.adminAuth },
      });
      const [occurrence] = JSON.parse(occurrences.body) as Array<{ occurrence: { component: string; request_id: string } }>;
      assert.equal(occurrence?.occurrence.component, 'console');
      assert.equal(occurrence?.occurrence.request_id, 'console-fault-1');
    } finally {
      await faulty.close();
    }
    const missing = await t.app.inject({ method: 'GET', url: '/console/no-such-page' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(missing.body, /There is no such page in the console\./);
  });

  it('lets a user edit its own account and change its password (with the current one), which ends its sessions', async () => {
    const cookie = await session(t, ALICE.login, ALICE.password);
    const own = await t.app.inject({ method: 'GET', url: `/console/users/${t.alice.id}`, headers: { cookie } });
    assert.equal(own.statusCode, 200);
    assert.ok(!own.body.includes('name="role"'), 'no role field for a user');
    const csrf = csrfOf(own.body);
    const post = (url: string, fields: Record<string, string>) =>
      t.app.inject({ method: 'POST', url, headers: { ...FORM, cookie }, payload: new URLSearchParams({ _csrf: csrf, ...fields }).toString() });
    const saved = await post(`/console/users/${t.alice.id}`, { login: 'alice', email: 'alice@example.com', first_name: 'Alicia', last_name: 'User', time_zone: '', locale: '', role: 'admin' });
    assert.equal(saved.statusCode, 303);
    assert.equal(saved.headers.location, `/console/users/${t.alice.id}?notice=saved`);
    const api = await t.app.inject({ method: 'GET', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth } });
    const record = (JSON.parse(api.body) as { user: { first_name: string; roles: Array<{ role: { identifier: string } }> } }).user;
    assert.equal(record.first_name, 'Alicia');
    assert.equal(record.roles[0]?.role.identifier, 'user');

    const wrong = await post(`/console/users/${t.alice.id}/password`, { current_password: 'not-it', password: 'alice-new-password' });
    assert.equal(wrong.statusCode, 422);
    assert.match(wrong.body, /<span class="field-error" id="current_password-error">current password is incorrect<\/span>/);
    const changed = await post(`/console/users/${t.alice.id}/password`, { current_password: ALICE.password, password: 'alice-new-password' });
    assert.equal(changed.statusCode, 303);
    assert.equal(changed.headers.location, '/console/sign-in?password_changed=1');
    assert.equal(changed.headers['set-cookie'], CLEARED);
    const after = await t.app.inject({ method: 'GET', url: '/console/users', headers: { cookie } });
    assert.equal(after.headers.location, '/console/sign-in?ended=1&next=%2Fconsole%2Fusers');
    await session(t, ALICE.login, 'alice-new-password');
  });

  it('deletes a user after asking, as the API does (marked deleted, then removed)', async () => {
    const cookie = await session(t);
    const ask = await t.app.inject({ method: 'GET', url: `/console/users/${t.alice.id}/delete`, headers: { cookie } });
    assert.match(ask.body, /<h1>Delete alice\?<\/h1>/);
    const csrf = csrfOf(ask.body);
    const deleted = await t.app.inject({ method: 'POST', url: `/console/users/${t.alice.id}/delete`, headers: { ...FORM, cookie }, payload: `_csrf=${csrf}` });
    assert.equal(deleted.headers.location, '/console/users?notice=deleted');
    const api = await t.app.inject({ method: 'GET', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth } });
    assert.equal((JSON.parse(api.body) as { user: { status: string } }).user.status, 'deleted');
    const again = await t.app.inject({ method: 'POST', url: `/console/users/${t.alice.id}/delete`, headers: { ...FORM, cookie }, payload: `_csrf=${csrf}` });
    assert.equal(again.headers.location, '/console/users?notice=removed');
    assert.equal((await t.app.inject({ method: 'GET', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth } })).statusCode, 404);
  });

  it('creates a user with the API\'s field errors beside the fields', async () => {
    const cookie = await session(t);
    const csrf = csrfOf((await t.app.inject({ method: 'GET', url: '/console/users/new', headers: { cookie } })).body);
    const bad = await t.app.inject({
      method: 'POST', url: '/console/users', headers: { ...FORM, cookie }, payload: new URLSearchParams({ _csrf: csrf, login: 'alice', email: 'nope', password: 'short', role: 'user' }).toString(),
    });
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /<span class="field-error" id="login-error">login has already been taken<\/span>/);
    assert.match(bad.body, /<span class="field-error" id="email-error">email is invalid<\/span>/);
    assert.match(bad.body, /<span class="field-error" id="password-error">password is too short \(minimum is \d+ characters\)<\/span>/);
    assert.ok(!bad.body.includes('value="short"'), 'the password is not sent back');
  });
});

describe('the errors list\'s cost', () => {
  it('reads a page of errors and their sparklines in a fixed number of statements, not two more an error', async () => {
    const statements: string[] = [];
    // A plugin that changes nothing, for a Kysely of the app's own whose executor can be watched.
    const counter: KyselyPlugin = {
      transformQuery: ({ node }) => node,
      transformResult: ({ result }) => Promise.resolve(result),
    };
    const gate = {
      attach<DB>(db: Kysely<DB>): Kysely<DB> {
        const counted = db.withPlugin(counter);
        const executor = counted.getExecutor();
        const execute = executor.executeQuery.bind(executor);
        executor.executeQuery = <R>(query: CompiledQuery<R>) => {
          statements.push(query.sql);
          return execute(query);
        };
        return counted;
      },
    };
    const t = await createTestApp({}, { gate });
    try {
      for (let i = 0; i < 30; i++) await reportError(t, { error_class: `Counted${i}`, message: `m${i}` });
      const cookie = await session(t);
      const histogramReads = async (url: string) => {
        statements.length = 0;
        const res = await t.app.inject({ method: 'GET', url, headers: { cookie } });
        assert.equal(res.statusCode, 200, url);
        // The page's reads: a write now and then is the app's bookkeeping landing meanwhile (the sign-in's access log row, a key's last use).
        const reads = statements.filter((sql) => /^\s*select\b/i.test(sql));
        return { rows: (res.body.match(/<svg class="sparkline"/g) ?? []).length, reads: reads.filter((sql) => /from "error_histogram"/.test(sql)).length, all: reads.length };
      };
      await histogramReads('/console/errors?per_page=1'); // the session's check, once
      const five = await histogramReads('/console/errors?per_page=5');
      const thirty = await histogramReads('/console/errors?per_page=30');
      assert.deepEqual([five.rows, five.reads, thirty.rows, thirty.reads], [5, 1, 30, 1]);
      assert.equal(thirty.all, five.all);
    } finally {
      await t.close();
    }
  });
});

describe('a backtrace line on an error\'s page', () => {
  it('reads as where and what, escaped, and a line that is no frame as it is', () => {
    assert.equal(frame("src/a.ts:1:in 'find'").text, '<li><code>src/a.ts:1</code> <span class="muted">in</span> <strong>find</strong></li>');
    assert.equal(frame('app/x.rb:7:in `<main>\'').text, '<li><code>app/x.rb:7</code> <span class="muted">in</span> <strong>&lt;main&gt;</strong></li>');
    assert.equal(frame("a:in 'b:in 'c'").text, '<li><code>a</code> <span class="muted">in</span> <strong>b:in &#39;c</strong></li>');
    assert.equal(frame("a:in ''").text, '<li><code>a</code> <span class="muted">in</span> <strong></strong></li>');
    assert.equal(frame(":in '").text, '<li><code>:in &#39;</code></li>');
    assert.equal(frame('at Object.<anonymous> (x.js:1:2)').text, '<li><code>at Object.&lt;anonymous&gt; (x.js:1:2)</code></li>');
  });

  it('costs one pass, even for a line full of ":in \'" (a backtracking pattern took seconds of CPU at 100,000 characters)', () => {
    const line = ":in '".repeat(20_000) + 'x';
    const before = process.cpuUsage();
    const text = frame(line).text;
    const used = process.cpuUsage(before);
    assert.equal(text, `<li><code>${':in &#39;'.repeat(20_000)}x</code></li>`);
    assert.ok(used.user + used.system < 500_000, `${used.user + used.system} µs`);
  });
});

describe('the console\'s roles, billing buckets, and the roles and bucket of a user (docs/console.md#roles)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const SCRIPT = '<script>alert(1)</script>';

  function api(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse> {
    return t.app.inject({
      method, url, headers: { authorization: t.adminAuth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  }

  /** A role's permission ids and label, as the API answers them. */
  async function roleOf(id: number): Promise<{ label: string; identifier: string; permissions: number[] } | undefined> {
    const res = await api('GET', `/roles/${id}.json`);
    if (res.statusCode === 404) return undefined;
    const { role } = JSON.parse(res.body) as { role: { label: string; identifier: string; permissions: Array<{ permission: { id: number } }> } };
    return { label: role.label, identifier: role.identifier, permissions: role.permissions.map((p) => p.permission.id) };
  }

  async function userOf(id: number): Promise<{ roles: number[]; bucket_id: number | null }> {
    const { user } = JSON.parse((await api('GET', `/users/${id}.json`)).body) as { user: { roles: Array<{ role: { id: number } }>; bucket_id: number | null } };
    return { roles: user.roles.map((r) => r.role.id), bucket_id: user.bucket_id };
  }

  /** A form POST with the page's CSRF token (fields may repeat, as checkboxes do). */
  function post(cookie: string, csrf: string | undefined, url: string, fields: Array<[string, string]> = []) {
    const form = new URLSearchParams(csrf === undefined ? fields : [['_csrf', csrf], ...fields]);
    return t.app.inject({ method: 'POST', url, headers: { ...FORM, cookie }, payload: form.toString() });
  }

  const get = (cookie: string, url: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });

  it('lists the roles with the system ones marked, in the navigation of those who may see them', async () => {
    const cookie = await session(t);
    const list = await get(cookie, '/console/roles');
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['content-security-policy'], CSP);
    assert.equal(list.headers['x-total'], '2');
    assert.match(list.body, /<a href="\/console\/roles">Roles<\/a>\n<a href="\/console\/buckets">Buckets<\/a>/);
    assert.ok(list.body.includes(`<td><a href="/console/roles/1">Administrator</a> <span class="badge system">system</span></td><td><code>admin</code></td>\n<td class="number">${PERMISSIONS.length}</td><td class="number">1</td>`), 'the admin role holds every permission');
    assert.match(list.body, /<td><a href="\/console\/roles\/2">User<\/a> <span class="badge system">system<\/span><\/td><td><code>user<\/code><\/td>\n<td class="number">3<\/td><td class="number">1<\/td>/);
    assert.match(list.body, /<a class="button" href="\/console\/roles\/new">New role<\/a>/);
  });

  it('creates a role with the permission picker (grouped by area, labels from the catalogue), showing its label as text', async () => {
    const cookie = await session(t);
    const form = await get(cookie, '/console/roles/new');
    assert.equal(form.statusCode, 200);
    for (const area of ['users', 'roles', 'user_groups', 'buckets', 'infrastructure_errors', 'webhook_deliveries']) {
      assert.ok(form.body.includes(`<fieldset class="area" data-area="${area}">\n<legend>${area}.* <label class="check all" for="all-${area}">`), area);
    }
    assert.ok(form.body.includes('<label class="check" for="permission-22"><input type="checkbox" id="permission-22" name="permission_ids" value="22"> <span>See infrastructure errors, their occurrences, histograms and breakdowns <code>infrastructure_errors.read</code></span></label>'));
    const csrf = csrfOf(form.body);

    const blank = await post(cookie, csrf, '/console/roles', [['label', ''], ['identifier', ''], ['permission_picker', '1'], ['permission_ids', '10'], ['permission_ids', '22']]);
    assert.equal(blank.statusCode, 422);
    assert.match(blank.body, /<span class="field-error" id="label-error">label can&#39;t be blank<\/span>/);
    assert.match(blank.body, /id="permission-10" name="permission_ids" value="10" checked>/, 'the ticked permissions stay ticked');
    assert.match(blank.body, /id="permission-22" name="permission_ids" value="22" checked>/);
    assert.match(blank.body, /id="permission-1" name="permission_ids" value="1">/);

    const made = await post(cookie, csrf, '/console/roles', [['label', SCRIPT], ['identifier', ''], ['permission_picker', '1'], ['permission_ids', '10'], ['permission_ids', '22']]);
    assert.equal(made.statusCode, 303, made.body);
    assert.equal(made.headers.location, '/console/roles/3?notice=created');
    assert.deepEqual(await roleOf(3), { label: SCRIPT, identifier: 'script_alert_1_script', permissions: [10, 22] });
    for (const url of ['/console/roles/3?notice=created', '/console/roles', '/console/roles/3/delete']) {
      const res = await get(cookie, url);
      assert.equal(res.statusCode, 200, url);
      assert.ok(!res.body.includes('<script>'), url);
      assert.ok(res.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), url);
    }
    assert.match((await get(cookie, '/console/roles/3?notice=created')).body, /<p class="notice" role="status">Role created.<\/p>/);
  });

  it('edits a role (no permission ticked is none), keeps the system roles\' identifiers and the admin role\'s permissions', async () => {
    const cookie = await session(t);
    assert.equal((await api('POST', '/roles.json', { role: { label: 'Auditor', permission_ids: [1, 10] } })).statusCode, 201);
    const page = await get(cookie, '/console/roles/3');
    const csrf = csrfOf(page.body);
    assert.match(page.body, /<input id="identifier" name="identifier" type="text" maxlength="64" value="auditor">/);
    const saved = await post(cookie, csrf, '/console/roles/3', [['label', 'Auditors'], ['identifier', 'auditors'], ['permission_picker', '1'], ['permission_ids', '18']]);
    assert.equal(saved.statusCode, 303);
    assert.equal(saved.headers.location, '/console/roles/3?notice=saved');
    assert.deepEqual(await roleOf(3), { label: 'Auditors', identifier: 'auditors', permissions: [18] });
    const none = await post(cookie, csrf, '/console/roles/3', [['label', 'Auditors'], ['identifier', 'auditors'], ['permission_picker', '1']]);
    assert.equal(none.statusCode, 303);
    assert.deepEqual((await roleOf(3))?.permissions, []);

    const admin = await get(cookie, '/console/roles/1');
    assert.match(admin.body, /<h1>Administrator <span class="badge system">system<\/span><\/h1>/);
    assert.match(admin.body, /<input id="identifier" name="identifier" type="text" maxlength="64" readonly value="admin" aria-describedby="identifier-hint">/);
    assert.match(admin.body, /<p class="hint">The admin role holds every permission; they cannot be changed.<\/p>/);
    assert.match(admin.body, /id="permission-25" name="permission_ids" value="25" checked disabled>/);
    assert.ok(!admin.body.includes('name="permission_picker"'), 'the admin role\'s form sends no permissions');
    assert.ok(!admin.body.includes('href="/console/roles/1/delete"'), 'no delete for a system role');
    assert.match(admin.body, /<span class="muted">A system role cannot be deleted.<\/span>/);
    const relabelled = await post(cookie, csrf, '/console/roles/1', [['label', 'Administrators'], ['identifier', 'admin']]);
    assert.equal(relabelled.statusCode, 303);
    assert.deepEqual(await roleOf(1), { label: 'Administrators', identifier: 'admin', permissions: PERMISSIONS.map(([id]) => id) });
    const renamed = await post(cookie, csrf, '/console/roles/2', [['label', 'User'], ['identifier', 'member'], ['permission_picker', '1'], ['permission_ids', '2']]);
    assert.equal(renamed.statusCode, 422);
    assert.match(renamed.body, /<span class="field-error" id="identifier-error">identifier of a system role cannot be changed<\/span>/);
    assert.deepEqual(await roleOf(2), { label: 'User', identifier: 'user', permissions: [2, 5, 9] });
  });

  it('clones a role, and deletes one no user holds; a system role or one in use is refused with the reason', async () => {
    const cookie = await session(t);
    assert.equal((await api('POST', '/roles.json', { role: { label: 'Support', permission_ids: [1, 7] } })).statusCode, 201);
    const csrf = csrfOf((await get(cookie, '/console/roles/3')).body);
    const cloned = await post(cookie, csrf, '/console/roles/3/clone');
    assert.equal(cloned.statusCode, 303);
    assert.equal(cloned.headers.location, '/console/roles/4?notice=cloned');
    assert.deepEqual(await roleOf(4), { label: 'Support (copy)', identifier: 'support_copy', permissions: [1, 7] });

    for (const id of [1, 2]) {
      const ask = await get(cookie, `/console/roles/${id}/delete`);
      assert.equal(ask.statusCode, 422);
      assert.match(ask.body, /<div class="error" role="alert"><p>A system role cannot be deleted.<\/p><\/div>/);
      const refused = await post(cookie, csrf, `/console/roles/${id}/delete`);
      assert.equal(refused.statusCode, 422);
      assert.match(refused.body, /<div class="error" role="alert"><p>A system role cannot be deleted<\/p><\/div>/);
    }
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { role_ids: [2, 3] } })).statusCode, 204);
    const ask = await get(cookie, '/console/roles/3/delete');
    assert.match(ask.body, /<p class="error" role="alert">1 user holds this role: a role that users hold cannot be deleted. Take it from them first.<\/p>/);
    const inUse = await post(cookie, csrf, '/console/roles/3/delete');
    assert.equal(inUse.statusCode, 422);
    assert.match(inUse.body, /<div class="error" role="alert"><p>A role that users hold cannot be deleted<\/p><\/div>/);
    assert.ok(await roleOf(3));
    const deleted = await post(cookie, csrf, '/console/roles/4/delete');
    assert.equal(deleted.statusCode, 303);
    assert.equal(deleted.headers.location, '/console/roles?notice=deleted');
    assert.equal(await roleOf(4), undefined);
  });

  it('creates, edits and deletes billing buckets, saying that cmi bills nothing', async () => {
    const cookie = await session(t);
    const list = await get(cookie, '/console/buckets');
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /<strong>cmi bills nothing<\/strong>/);
    assert.match(list.body, /<p class="empty">No buckets on this page.<\/p>/);
    const csrf = csrfOf(list.body);
    const bad = await post(cookie, csrf, '/console/buckets', [['label', 'Gold'], ['currency_code', 'eur'], ['monthly_price', '-1'], ['allows_kms', 'true']]);
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /<span class="field-error" id="currency_code-error">currency code must be three capital letters \(ISO 4217\)<\/span>/);
    assert.match(bad.body, /<span class="field-error" id="monthly_price-error">monthly price must be a number of at least 0<\/span>/);
    assert.match(bad.body, /id="allows_kms" name="allows_kms" value="true" checked>/);
    const made = await post(cookie, csrf, '/console/buckets', [['label', SCRIPT], ['currency_code', 'EUR'], ['monthly_price', '12.5'], ['allows_kms', 'true'], ['show_price', 'true']]);
    assert.equal(made.statusCode, 303);
    assert.equal(made.headers.location, '/console/buckets/1?notice=created');
    const record = () => api('GET', '/billing/buckets/1.json').then((res) => JSON.parse(res.body) as { bucket: Record<string, unknown> });
    assert.deepEqual(Object.entries((await record()).bucket).filter(([name]) => !name.endsWith('_at')), [
      ['id', 1], ['label', SCRIPT], ['currency_code', 'EUR'], ['monthly_price', 12.5], ['show_price', true], ['allows_kms', true], ['allows_mak', false], ['allows_own', false],
    ]);
    for (const url of ['/console/buckets', '/console/buckets/1', '/console/buckets/1/delete']) {
      const res = await get(cookie, url);
      assert.equal(res.statusCode, 200, url);
      assert.ok(!res.body.includes('<script>'), url);
      assert.ok(res.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), url);
    }
    const saved = await post(cookie, csrf, '/console/buckets/1', [['label', 'Gold'], ['currency_code', 'EUR'], ['monthly_price', '10'], ['allows_mak', 'true']]);
    assert.equal(saved.statusCode, 303);
    assert.equal(saved.headers.location, '/console/buckets/1?notice=saved');
    const { bucket } = await record();
    assert.deepEqual([bucket.label, bucket.monthly_price, bucket.show_price, bucket.allows_kms, bucket.allows_mak], ['Gold', 10, false, false, true]);

    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { bucket_id: 1 } })).statusCode, 204);
    const inUse = await post(cookie, csrf, '/console/buckets/1/delete');
    assert.equal(inUse.statusCode, 422);
    assert.match(inUse.body, /<div class="error" role="alert"><p>A bucket that users belong to cannot be deleted<\/p><\/div>/);
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { bucket_id: null } })).statusCode, 204);
    const deleted = await post(cookie, csrf, '/console/buckets/1/delete');
    assert.equal(deleted.statusCode, 303);
    assert.equal(deleted.headers.location, '/console/buckets?notice=deleted');
    assert.equal((await api('GET', '/billing/buckets/1.json')).statusCode, 404);
  });

  it('shows a user\'s roles and bucket, and lets a holder of users.update pick them', async () => {
    assert.equal((await api('POST', '/roles.json', { role: { label: SCRIPT, permission_ids: [22] } })).statusCode, 201);
    assert.equal((await api('POST', '/billing/buckets.json', { bucket: { label: 'Gold <b>' } })).statusCode, 201);
    const cookie = await session(t);
    const page = await get(cookie, `/console/users/${t.alice.id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<dt>Roles<\/dt><dd><ul class="inline"><li><a href="\/console\/roles\/2">User<\/a><\/li><\/ul><\/dd>\n<dt>Billing bucket<\/dt><dd><span class="muted">none<\/span><\/dd>/);
    assert.match(page.body, /<label class="check" for="role-2"><input type="checkbox" id="role-2" name="role_ids" value="2" checked> <span>User <span class="badge system">system<\/span><\/span><\/label>/);
    assert.match(page.body, /<label class="check" for="role-3"><input type="checkbox" id="role-3" name="role_ids" value="3"> <span>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/span><\/label>/);
    assert.match(page.body, /<select id="bucket_id" name="bucket_id"><option value="" selected>\(none\)<\/option><option value="1">Gold &lt;b&gt;<\/option><\/select>/);
    const csrf = csrfOf(page.body);
    const fields: Array<[string, string]> = [['login', 'alice'], ['email', ALICE.email], ['first_name', ''], ['last_name', ''], ['time_zone', ''], ['locale', ''], ['role_picker', '1']];

    const none = await post(cookie, csrf, `/console/users/${t.alice.id}`, [...fields, ['bucket_id', '']]);
    assert.equal(none.statusCode, 422);
    assert.match(none.body, /<span class="field-error" id="role_ids-error">role ids must name at least one role<\/span>/);
    assert.match(none.body, /id="role-2" name="role_ids" value="2">/, 'as sent: nothing ticked');

    const saved = await post(cookie, csrf, `/console/users/${t.alice.id}`, [...fields, ['role_ids', '2'], ['role_ids', '3'], ['bucket_id', '1']]);
    assert.equal(saved.statusCode, 303);
    assert.deepEqual(await userOf(t.alice.id), { roles: [2, 3], bucket_id: 1 });
    const after = await get(cookie, `/console/users/${t.alice.id}?notice=saved`);
    assert.match(after.body, /<dt>Roles<\/dt><dd><ul class="inline"><li><a href="\/console\/roles\/2">User<\/a><\/li><li><a href="\/console\/roles\/3">&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/a><\/li><\/ul><\/dd>\n<dt>Billing bucket<\/dt><dd><a href="\/console\/buckets\/1">Gold &lt;b&gt;<\/a><\/dd>/);
    assert.ok(!after.body.includes('<script>') && !after.body.includes('<b>'));
    const list = await get(cookie, '/console/users');
    assert.ok(list.body.includes('<td>User, &lt;script&gt;alert(1)&lt;/script&gt;</td>'));

    // Alice's own page: what she holds, as text, and no picker; roles or a bucket she sends are not passed on.
    const own = await session(t, ALICE.login, ALICE.password);
    const mine = await get(own, `/console/users/${t.alice.id}`);
    assert.match(mine.body, /<dt>Roles<\/dt><dd><ul class="inline"><li>User<\/li><li>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/li><\/ul><\/dd>\n<dt>Billing bucket<\/dt><dd>#1<\/dd>/);
    assert.ok(!mine.body.includes('name="role_ids"') && !mine.body.includes('name="bucket_id"'));
    const sent = await post(own, csrfOf(mine.body), `/console/users/${t.alice.id}`, [...fields, ['role_ids', '1'], ['bucket_id', '']]);
    assert.equal(sent.statusCode, 303);
    assert.deepEqual(await userOf(t.alice.id), { roles: [2, 3], bucket_id: 1 });
  });

  it('gives the users list a search box and filters by status and role, kept in the URL and the pager; a plain user gets none', async () => {
    const cookie = await session(t);
    const list = await get(cookie, '/console/users');
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /<form method="get" action="\/console\/users" class="filters" role="search" aria-label="Search users">/);
    assert.match(list.body, /<select id="role_id" name="role_id"><option value="" selected>any<\/option><option value="1">Administrator<\/option><option value="2">User<\/option><\/select>/);
    // The form's empty fields are dropped from the URL; the values stay in the form.
    const empties = await get(cookie, '/console/users?q=ali&status=&role_id=2');
    assert.equal(empties.statusCode, 303);
    assert.equal(empties.headers.location, '/console/users?q=ali&role_id=2');
    const kept = await get(cookie, '/console/users?q=a%22li&status=suspended&role_id=2&per_page=1&page=2');
    assert.match(kept.body, /<input id="q" name="q" type="search" maxlength="255" placeholder="login, name or email" value="a&quot;li">/);
    assert.match(kept.body, /<option value="suspended" selected>suspended<\/option>/);
    assert.match(kept.body, /<option value="2" selected>User<\/option>/);
    assert.match(kept.body, /<a rel="prev" href="\/console\/users\?q=a%22li&amp;status=suspended&amp;role_id=2">← Previous<\/a>/);
    const bad = await get(cookie, '/console/users?status=gone&role_id=0');
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /<span class="field-error" id="status-error">status must be one of active, suspended, deleted<\/span>/);
    assert.match(bad.body, /<span class="field-error" id="role_id-error">role id must be an id<\/span>/);
    assert.match(bad.body, /<p class="empty">No users match.<\/p>/);
    const own = await get(await session(t, ALICE.login, ALICE.password), '/console/users');
    assert.ok(!own.body.includes('class="filters"'), 'a user sees its own account, with nothing to search');
  });

  it('lists the users the search and filters keep (the users service\'s filters)', async () => {
    assert.equal((await api('POST', '/users.json', { user: { login: 'bob', email: 'bob@example.com', password: 'bob-password', first_name: 'Alison' } })).statusCode, 201);
    assert.equal((await api('POST', `/users/${t.alice.id}/suspend.json`)).statusCode, 200);
    const cookie = await session(t);
    const logins = async (url: string) => {
      const res = await get(cookie, url);
      assert.equal(res.statusCode, 200, url);
      return [res.headers['x-total'], [...res.body.matchAll(/<td><a href="\/console\/users\/\d+">([^<]+)<\/a><\/td>/g)].map((m) => m[1])];
    };
    assert.deepEqual(await logins('/console/users?q=ali'), ['2', ['alice', 'bob']]);
    assert.deepEqual(await logins('/console/users?q=ali&status=active'), ['1', ['bob']]);
    assert.deepEqual(await logins('/console/users?role_id=1'), ['1', ['admin']]);
    assert.deepEqual(await logins('/console/users?status=deleted'), ['0', []]);
  });

  it('keeps a plain user out of roles and buckets (nothing in its navigation, 403 on every page and form)', async () => {
    assert.equal((await api('POST', '/roles.json', { role: { label: 'Kept', permission_ids: [] } })).statusCode, 201);
    assert.equal((await api('POST', '/billing/buckets.json', { bucket: { label: 'Kept' } })).statusCode, 201);
    const cookie = await session(t, ALICE.login, ALICE.password);
    const home = await get(cookie, '/console/users');
    assert.ok(!home.body.includes('href="/console/roles"') && !home.body.includes('href="/console/buckets"'));
    const csrf = csrfOf(home.body);
    for (const url of ['/console/roles', '/console/roles/new', '/console/roles/3', '/console/roles/3/delete', '/console/buckets', '/console/buckets/new', '/console/buckets/1', '/console/buckets/1/delete']) {
      const res = await get(cookie, url);
      assert.equal(res.statusCode, 403, url);
      assert.match(res.body, /<h1>Not allowed<\/h1>/, url);
      assert.ok(!res.body.includes('Kept'), url);
    }
    const posts: Array<[string, Array<[string, string]>]> = [
      ['/console/roles', [['label', 'Mine'], ['permission_picker', '1'], ['permission_ids', '1']]],
      ['/console/roles/2', [['label', 'User'], ['permission_picker', '1'], ['permission_ids', '1']]],
      ['/console/roles/2/clone', []],
      ['/console/roles/3/delete', []],
      ['/console/buckets', [['label', 'Mine']]],
      ['/console/buckets/1', [['label', 'Mine']]],
      ['/console/buckets/1/delete', []],
    ];
    for (const [url, fields] of posts) {
      const res = await post(cookie, csrf, url, fields);
      assert.equal(res.statusCode, 403, url);
      assert.match(res.body, /<h1>Not allowed<\/h1>/, url);
    }
    const roles = JSON.parse((await api('GET', '/roles.json')).body) as unknown[];
    assert.equal(roles.length, 3);
    assert.deepEqual(await roleOf(2), { label: 'User', identifier: 'user', permissions: [2, 5, 9] });
    assert.equal((JSON.parse((await api('GET', '/billing/buckets.json')).body) as unknown[]).length, 1);
    assert.equal((JSON.parse((await api('GET', '/billing/buckets/1.json')).body) as { bucket: { label: string } }).bucket.label, 'Kept');
  });

  it('shows a holder of roles.read alone the roles without the forms, and its service refuses the changes', async () => {
    assert.equal((await api('POST', '/roles.json', { role: { label: 'Reader', permission_ids: [2, 10] } })).statusCode, 201);
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { role_ids: [3] } })).statusCode, 204);
    const cookie = await session(t, ALICE.login, ALICE.password);
    const list = await get(cookie, '/console/roles');
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /<a href="\/console\/roles">Roles<\/a>\n+<\/nav>/);
    assert.ok(!list.body.includes('New role'));
    const role = await get(cookie, '/console/roles/3');
    assert.ok(!role.body.includes('<form method="post" action="/console/roles/3'), 'no edit, clone or delete form');
    assert.match(role.body, /<ul class="permissions"><li>See the own user <code>users.read.own<\/code><\/li><li>See roles and permissions <code>roles.read<\/code><\/li><\/ul>/);
    const refused = await post(cookie, csrfOf(role.body), '/console/roles/3', [['label', 'Mine'], ['permission_picker', '1'], ['permission_ids', '4']]);
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(await roleOf(3), { label: 'Reader', identifier: 'reader', permissions: [2, 10] });
  });

  it('refuses every form of these pages without the session\'s CSRF token, and changes nothing', async () => {
    assert.equal((await api('POST', '/roles.json', { role: { label: 'Kept', permission_ids: [1] } })).statusCode, 201);
    assert.equal((await api('POST', '/billing/buckets.json', { bucket: { label: 'Kept' } })).statusCode, 201);
    const cookie = await session(t);
    const other = csrfOf((await get(await session(t), '/console/roles')).body);
    const posts: Array<[string, Array<[string, string]>]> = [
      ['/console/roles', [['label', 'New']]],
      ['/console/roles/3', [['label', 'Changed'], ['permission_picker', '1']]],
      ['/console/roles/3/clone', []],
      ['/console/roles/3/delete', []],
      ['/console/buckets', [['label', 'New']]],
      ['/console/buckets/1', [['label', 'Changed']]],
      ['/console/buckets/1/delete', []],
      [`/console/users/${t.alice.id}`, [['login', 'alice'], ['email', ALICE.email], ['role_picker', '1'], ['role_ids', '1'], ['bucket_id', '1']]],
    ];
    for (const [url, fields] of posts) {
      for (const csrf of [undefined, other]) {
        const res = await post(cookie, csrf, url, fields);
        assert.equal(res.statusCode, 403, url);
        assert.match(res.body, /This form did not come from a page of this console/, url);
      }
    }
    assert.deepEqual(await roleOf(3), { label: 'Kept', identifier: 'kept', permissions: [1] });
    assert.equal((JSON.parse((await api('GET', '/roles.json')).body) as unknown[]).length, 3);
    assert.equal((JSON.parse((await api('GET', '/billing/buckets/1.json')).body) as { bucket: { label: string } }).bucket.label, 'Kept');
    assert.deepEqual(await userOf(t.alice.id), { roles: [2], bucket_id: null });
  });
});

describe('the console\'s user groups, and the group of a user (docs/console.md#user-groups)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const SCRIPT = '<script>alert(1)</script>';

  function api(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse> {
    return t.app.inject({
      method, url, headers: { authorization: t.adminAuth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  }

  /** A group's fields as the API answers them, or undefined after a 404. */
  async function groupOf(id: number): Promise<{ label: string; identifier: string; roles: number[]; bucket_id: number | null } | undefined> {
    const res = await api('GET', `/user_groups/${id}.json`);
    if (res.statusCode === 404) return undefined;
    const { user_group: group } = JSON.parse(res.body) as { user_group: { label: string; identifier: string; roles: Array<{ role: { id: number } }>; bucket_id: number | null } };
    return { label: group.label, identifier: group.identifier, roles: group.roles.map((r) => r.role.id), bucket_id: group.bucket_id };
  }

  async function groupIdOf(userId: number): Promise<number | null> {
    return (JSON.parse((await api('GET', `/users/${userId}.json`)).body) as { user: { user_group_id: number | null } }).user.user_group_id;
  }

  function post(cookie: string, csrf: string | undefined, url: string, fields: Array<[string, string]> = []) {
    const form = new URLSearchParams(csrf === undefined ? fields : [['_csrf', csrf], ...fields]);
    return t.app.inject({ method: 'POST', url, headers: { ...FORM, cookie }, payload: form.toString() });
  }

  const get = (cookie: string, url: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });

  it('creates a group with roles and a bucket, lists and shows it (label as text), and edits it', async () => {
    assert.equal((await api('POST', '/billing/buckets.json', { bucket: { label: 'Gold <b>' } })).statusCode, 201);
    const cookie = await session(t);
    const list = await get(cookie, '/console/groups');
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['content-security-policy'], CSP);
    assert.equal(list.headers['x-total'], '0');
    assert.match(list.body, /<a href="\/console\/buckets">Buckets<\/a>\n<a href="\/console\/groups">Groups<\/a>/);
    assert.match(list.body, /<p class="empty">No groups on this page.<\/p>/);
    assert.match(list.body, /<a class="button" href="\/console\/groups\/new">New group<\/a>/);
    const form = await get(cookie, '/console/groups/new');
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /<label class="check" for="role-1"><input type="checkbox" id="role-1" name="role_ids" value="1"> <span>Administrator <span class="badge system">system<\/span><\/span><\/label>/);
    assert.match(form.body, /<select id="bucket_id" name="bucket_id"><option value="" selected>\(none\)<\/option><option value="1">Gold &lt;b&gt;<\/option><\/select>/);
    const csrf = csrfOf(form.body);

    const bad = await post(cookie, csrf, '/console/groups', [['label', ''], ['identifier', 'Bad id'], ['role_picker', '1'], ['role_ids', '2'], ['bucket_id', '1']]);
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /<span class="field-error" id="label-error">label can&#39;t be blank<\/span>/);
    assert.match(bad.body, /<span class="field-error" id="identifier-error">identifier must be lower-case letters, digits and _ \. -, not starting with \. or -<\/span>/);
    assert.match(bad.body, /id="role-2" name="role_ids" value="2" checked>/, 'the ticked roles stay ticked');
    assert.match(bad.body, /<option value="1" selected>Gold &lt;b&gt;<\/option>/);
    assert.equal(await groupOf(1), undefined);

    const made = await post(cookie, csrf, '/console/groups', [['label', SCRIPT], ['identifier', ''], ['role_picker', '1'], ['role_ids', '2'], ['bucket_id', '1']]);
    assert.equal(made.statusCode, 303, made.body);
    assert.equal(made.headers.location, '/console/groups/1?notice=created');
    assert.deepEqual(await groupOf(1), { label: SCRIPT, identifier: 'script_alert_1_script', roles: [2], bucket_id: 1 });
    for (const url of ['/console/groups/1?notice=created', '/console/groups', '/console/groups/1/delete']) {
      const res = await get(cookie, url);
      assert.equal(res.statusCode, 200, url);
      assert.ok(!res.body.includes('<script>') && !res.body.includes('<b>'), url);
      assert.ok(res.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), url);
    }
    const listed = await get(cookie, '/console/groups');
    assert.equal(listed.headers['x-total'], '1');
    assert.ok(listed.body.includes('<td><a href="/console/groups/1">&lt;script&gt;alert(1)&lt;/script&gt;</a></td><td><code>script_alert_1_script</code></td>\n<td>User</td><td>Gold &lt;b&gt;</td>'), listed.body);
    const shown = await get(cookie, '/console/groups/1?notice=created');
    assert.match(shown.body, /<p class="notice" role="status">Group created.<\/p>/);
    assert.match(shown.body, /<dt>Identifier<\/dt><dd><code>script_alert_1_script<\/code><\/dd>\n<dt>Roles<\/dt><dd><ul class="inline"><li><a href="\/console\/roles\/2">User<\/a><\/li><\/ul><\/dd>\n<dt>Billing bucket<\/dt><dd><a href="\/console\/buckets\/1">Gold &lt;b&gt;<\/a><\/dd>/);
    assert.match(shown.body, /<h2 id="members-heading">Members<\/h2>\n<p class="total">0 members<\/p>/);
    assert.match(shown.body, /<a class="button danger" href="\/console\/groups\/1\/delete">Delete…<\/a>/);

    const saved = await post(cookie, csrf, '/console/groups/1', [['label', 'Support'], ['identifier', 'support'], ['role_picker', '1'], ['role_ids', '1'], ['role_ids', '2'], ['bucket_id', '']]);
    assert.equal(saved.statusCode, 303);
    assert.equal(saved.headers.location, '/console/groups/1?notice=saved');
    assert.deepEqual(await groupOf(1), { label: 'Support', identifier: 'support', roles: [1, 2], bucket_id: null });
    const none = await post(cookie, csrf, '/console/groups/1', [['label', 'Support'], ['identifier', 'support'], ['role_picker', '1'], ['bucket_id', '']]);
    assert.equal(none.statusCode, 303);
    assert.deepEqual((await groupOf(1))?.roles, [], 'no role ticked is none');
    assert.equal((await api('POST', '/user_groups.json', { user_group: { label: 'Other' } })).statusCode, 201);
    const taken = await post(cookie, csrf, '/console/groups/2', [['label', 'Other'], ['identifier', 'support'], ['role_picker', '1'], ['bucket_id', '9']]);
    assert.equal(taken.statusCode, 422);
    assert.match(taken.body, /<span class="field-error" id="identifier-error">identifier has already been taken<\/span>/);
    assert.match(taken.body, /<span class="field-error" id="bucket_id-error">bucket id names no bucket: 9<\/span>/);
    assert.deepEqual(await groupOf(2), { label: 'Other', identifier: 'other', roles: [], bucket_id: null });
  });

  it('lists a group\'s members with links, and refuses to delete a group users belong to (422, the reason said); deletes an empty one after asking', async () => {
    assert.equal((await api('POST', '/user_groups.json', { user_group: { label: 'Ops', role_ids: [2] } })).statusCode, 201);
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { user_group_id: 1 } })).statusCode, 204);
    const cookie = await session(t);
    const shown = await get(cookie, '/console/groups/1');
    assert.match(shown.body, /<p class="total">1 member<\/p>\n<ul class="members"><li><a href="\/console\/users\/\d+">alice<\/a> <span class="status status-active">active<\/span><\/li><\/ul>/);
    const ask = await get(cookie, '/console/groups/1/delete');
    assert.equal(ask.statusCode, 200);
    assert.match(ask.body, /<h1>Delete Ops\?<\/h1>/);
    assert.match(ask.body, /<form method="post" action="\/console\/groups\/1\/delete"><input type="hidden" name="_csrf" value="[^"]+">\n<button type="submit" class="danger">Delete<\/button>/);
    const csrf = csrfOf(ask.body);
    const refused = await post(cookie, csrf, '/console/groups/1/delete');
    assert.equal(refused.statusCode, 422);
    assert.match(refused.body, /<div class="error" role="alert"><p>A user group that users belong to cannot be deleted<\/p><\/div>/);
    assert.ok(await groupOf(1));
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { user_group_id: null } })).statusCode, 204);
    const deleted = await post(cookie, csrf, '/console/groups/1/delete');
    assert.equal(deleted.statusCode, 303);
    assert.equal(deleted.headers.location, '/console/groups?notice=deleted');
    assert.equal(await groupOf(1), undefined);
    assert.match((await get(cookie, '/console/groups?notice=deleted')).body, /<p class="notice" role="status">Group deleted.<\/p>/);
  });

  it('shows a user\'s group, lets a holder of users.update pick it, and filters the users list by group', async () => {
    assert.equal((await api('POST', '/user_groups.json', { user_group: { label: SCRIPT } })).statusCode, 201);
    assert.equal((await api('POST', '/user_groups.json', { user_group: { label: 'Ops' } })).statusCode, 201);
    const cookie = await session(t);
    const page = await get(cookie, `/console/users/${t.alice.id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<dt>User group<\/dt><dd><span class="muted">none<\/span><\/dd>/);
    assert.match(page.body, /<select id="user_group_id" name="user_group_id"><option value="" selected>\(none\)<\/option><option value="1">&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/option><option value="2">Ops<\/option><\/select>/);
    const csrf = csrfOf(page.body);
    const fields: Array<[string, string]> = [['login', 'alice'], ['email', ALICE.email], ['first_name', ''], ['last_name', ''], ['time_zone', ''], ['locale', ''], ['role_picker', '1'], ['role_ids', '2'], ['bucket_id', '']];
    const unknown = await post(cookie, csrf, `/console/users/${t.alice.id}`, [...fields, ['user_group_id', '9']]);
    assert.equal(unknown.statusCode, 422);
    assert.match(unknown.body, /<span class="field-error" id="user_group_id-error">user group id names no user group: 9<\/span>/);
    assert.equal(await groupIdOf(t.alice.id), null);
    const saved = await post(cookie, csrf, `/console/users/${t.alice.id}`, [...fields, ['user_group_id', '1']]);
    assert.equal(saved.statusCode, 303);
    assert.equal(await groupIdOf(t.alice.id), 1);
    const after = await get(cookie, `/console/users/${t.alice.id}`);
    assert.match(after.body, /<dt>User group<\/dt><dd><a href="\/console\/groups\/1">&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/a><\/dd>/);
    assert.match(after.body, /<option value="1" selected>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/option>/);
    assert.ok(!after.body.includes('<script>'));

    const list = await get(cookie, '/console/users');
    assert.match(list.body, /<select id="user_group_id" name="user_group_id"><option value="" selected>any<\/option><option value="1">&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/option><option value="2">Ops<\/option><\/select>/);
    const filtered = await get(cookie, '/console/users?user_group_id=1');
    assert.equal(filtered.statusCode, 200);
    assert.equal(filtered.headers['x-total'], '1');
    assert.deepEqual([...filtered.body.matchAll(/<td><a href="\/console\/users\/\d+">([^<]+)<\/a><\/td>/g)].map((m) => m[1]), ['alice']);
    assert.match(filtered.body, /<option value="1" selected>/);
    assert.equal((await get(cookie, '/console/users?user_group_id=2')).headers['x-total'], '0');

    const cleared = await post(cookie, csrf, `/console/users/${t.alice.id}`, [...fields, ['user_group_id', '']]);
    assert.equal(cleared.statusCode, 303);
    assert.equal(await groupIdOf(t.alice.id), null);

    // Alice's own page: her group by id only (she may not see groups), no picker, and a group she sends is not passed on.
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { user_group_id: 2 } })).statusCode, 204);
    const own = await session(t, ALICE.login, ALICE.password);
    const mine = await get(own, `/console/users/${t.alice.id}`);
    assert.match(mine.body, /<dt>User group<\/dt><dd>#2<\/dd>/);
    assert.ok(!mine.body.includes('name="user_group_id"'));
    const sent = await post(own, csrfOf(mine.body), `/console/users/${t.alice.id}`, [['login', 'alice'], ['email', ALICE.email], ['user_group_id', '1']]);
    assert.equal(sent.statusCode, 303);
    assert.equal(await groupIdOf(t.alice.id), 2);
  });

  it('keeps a plain user out of the groups (nothing in its navigation, 403 on every page and form)', async () => {
    assert.equal((await api('POST', '/user_groups.json', { user_group: { label: 'Kept' } })).statusCode, 201);
    const cookie = await session(t, ALICE.login, ALICE.password);
    const home = await get(cookie, '/console/users');
    assert.ok(!home.body.includes('href="/console/groups"'));
    const csrf = csrfOf(home.body);
    for (const url of ['/console/groups', '/console/groups/new', '/console/groups/1', '/console/groups/1/delete']) {
      const res = await get(cookie, url);
      assert.equal(res.statusCode, 403, url);
      assert.match(res.body, /<h1>Not allowed<\/h1>/, url);
      assert.ok(!res.body.includes('Kept'), url);
    }
    const posts: Array<[string, Array<[string, string]>]> = [
      ['/console/groups', [['label', 'Mine'], ['role_picker', '1'], ['role_ids', '1']]],
      ['/console/groups/1', [['label', 'Mine'], ['role_picker', '1'], ['role_ids', '1']]],
      ['/console/groups/1/delete', []],
    ];
    for (const [url, fields] of posts) {
      const res = await post(cookie, csrf, url, fields);
      assert.equal(res.statusCode, 403, url);
      assert.match(res.body, /<h1>Not allowed<\/h1>/, url);
    }
    assert.equal((JSON.parse((await api('GET', '/user_groups.json')).body) as unknown[]).length, 1);
    assert.deepEqual(await groupOf(1), { label: 'Kept', identifier: 'kept', roles: [], bucket_id: null });
  });

  it('shows a holder of user_groups.read alone the groups without the forms, and its service refuses the changes', async () => {
    assert.equal((await api('POST', '/roles.json', { role: { label: 'Reader', permission_ids: [2, 14] } })).statusCode, 201);
    assert.equal((await api('POST', '/user_groups.json', { user_group: { label: 'Kept' } })).statusCode, 201);
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { role_ids: [3] } })).statusCode, 204);
    const cookie = await session(t, ALICE.login, ALICE.password);
    const list = await get(cookie, '/console/groups');
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /<a href="\/console\/groups">Groups<\/a>\n+<\/nav>/);
    assert.ok(!list.body.includes('New group'));
    const group = await get(cookie, '/console/groups/1');
    assert.equal(group.statusCode, 200);
    assert.ok(!group.body.includes('<form method="post" action="/console/groups/1'), 'no edit or delete form');
    assert.match(group.body, /<p class="total">0 members<\/p>/, 'users.read.own: only itself could be listed');
    const refused = await post(cookie, csrfOf(group.body), '/console/groups/1', [['label', 'Mine']]);
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(await groupOf(1), { label: 'Kept', identifier: 'kept', roles: [], bucket_id: null });
  });

  it('refuses every form of these pages without the session\'s CSRF token, and changes nothing', async () => {
    assert.equal((await api('POST', '/user_groups.json', { user_group: { label: 'Kept' } })).statusCode, 201);
    const cookie = await session(t);
    const other = csrfOf((await get(await session(t), '/console/groups')).body);
    const posts: Array<[string, Array<[string, string]>]> = [
      ['/console/groups', [['label', 'New']]],
      ['/console/groups/1', [['label', 'Changed'], ['role_picker', '1'], ['role_ids', '1']]],
      ['/console/groups/1/delete', []],
      [`/console/users/${t.alice.id}`, [['login', 'alice'], ['email', ALICE.email], ['user_group_id', '1']]],
    ];
    for (const [url, fields] of posts) {
      for (const csrf of [undefined, other]) {
        const res = await post(cookie, csrf, url, fields);
        assert.equal(res.statusCode, 403, url);
        assert.match(res.body, /This form did not come from a page of this console/, url);
      }
    }
    assert.deepEqual(await groupOf(1), { label: 'Kept', identifier: 'kept', roles: [], bucket_id: null });
    assert.equal((JSON.parse((await api('GET', '/user_groups.json')).body) as unknown[]).length, 1);
    assert.equal(await groupIdOf(t.alice.id), null);
  });
});

describe('the console\'s triage of errors (docs/console.md#triage)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const SCRIPT = '<script>alert("x")</script> & \'quoted\'';
  const get = (cookie: string, url: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });
  function post(cookie: string, csrf: string | undefined, url: string, fields: Array<[string, string]> = []) {
    const form = new URLSearchParams(csrf === undefined ? fields : [['_csrf', csrf], ...fields]);
    return t.app.inject({ method: 'POST', url, headers: { ...FORM, cookie }, payload: form.toString() });
  }
  function api(method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) {
    return t.app.inject({
      method, url, headers: { authorization: t.adminAuth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  }
  const triageOf = async (id: number) => (JSON.parse((await api('GET', `/sysadmin_tools/infrastructure/errors/${id}/triage.json`)).body) as { triage: { status: string; assignee_id: number | null; snoozed_until: string | null; snooze_occurrences: number | null } }).triage;
  const classes = (body: string) => [...body.matchAll(/<td><a href="\/console\/errors\/\d+">([^<]*)<\/a><\/td>/g)].map((m) => m[1]);
  /** Gives alice a role of these permissions (ids of src/roles/permissions.ts) besides users.read.own. */
  async function aliceMay(...identifiers: string[]): Promise<void> {
    const ids = PERMISSIONS.filter(([, identifier]) => identifier === 'users.read.own' || identifiers.includes(identifier)).map(([id]) => id);
    const role = await api('POST', '/roles.json', { role: { label: 'Triage', permission_ids: ids } });
    assert.equal(role.statusCode, 201, role.body);
    const roleId = (JSON.parse(role.body) as { role: { id: number } }).role.id;
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { role_ids: [roleId] } })).statusCode, 204);
  }

  it('opens the list on unresolved errors, shows status and assignee, and applies status, assignee, host, component and sort through the API\'s parser', async () => {
    await reportError(t, { error_class: 'AlphaFault', message: 'a', host: 'hv-01', component: 'storage', count: 5 });
    t.time.advance(60);
    const b = await reportError(t, { error_class: 'BetaFault', message: 'b', host: 'hv-02', component: 'scheduler' });
    t.time.advance(60);
    const c = await reportError(t, { error_class: 'GammaFault', message: 'c', host: 'hv-01', component: 'scheduler' });
    assert.equal((await api('PUT', `/sysadmin_tools/infrastructure/errors/${b}/triage.json`, { triage: { status: 'resolved' } })).statusCode, 200);
    assert.equal((await api('PUT', `/sysadmin_tools/infrastructure/errors/${c}/triage.json`, { triage: { assignee_id: t.admin.id } })).statusCode, 200);
    const cookie = await session(t);

    const list = await get(cookie, '/console/errors');
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['x-total'], '2');
    assert.deepEqual(classes(list.body), ['GammaFault', 'AlphaFault']);
    assert.match(list.body, /<select id="status" name="status"><option value="" selected>unresolved<\/option><option value="resolved">resolved<\/option><option value="ignored">ignored<\/option><option value="snoozed">snoozed<\/option><option value="all">all<\/option><\/select>/);
    assert.match(list.body, /<select id="assignee" name="assignee"><option value="" selected>anyone<\/option><option value="me">me<\/option><option value="none">no one<\/option><option value="1">admin<\/option><\/select>/);
    assert.ok(list.body.includes(`<td class="triage-status"><span class="status status-unresolved">unresolved</span></td>\n<td class="assignee">admin</td>`));
    assert.ok(list.body.includes('<td class="triage-status"><span class="status status-unresolved">unresolved</span></td>\n<td class="assignee"><span class="muted">-</span></td>'));

    const cases: Array<[string, string[], string]> = [
      ['/console/errors?status=all', ['GammaFault', 'BetaFault', 'AlphaFault'], '3'],
      ['/console/errors?status=resolved', ['BetaFault'], '1'],
      ['/console/errors?assignee=me', ['GammaFault'], '1'],
      ['/console/errors?assignee=none&status=all', ['BetaFault', 'AlphaFault'], '2'],
      ['/console/errors?host=hv-01', ['GammaFault', 'AlphaFault'], '2'],
      ['/console/errors?component=scheduler&status=all', ['GammaFault', 'BetaFault'], '2'],
      ['/console/errors?status=all&sort=counter', ['AlphaFault', 'GammaFault', 'BetaFault'], '3'],
      ['/console/errors?status=all&sort=created_at&direction=asc', ['AlphaFault', 'BetaFault', 'GammaFault'], '3'],
    ];
    for (const [url, expected, total] of cases) {
      const res = await get(cookie, url);
      assert.equal(res.statusCode, 200, url);
      assert.deepEqual(classes(res.body), expected, url);
      assert.equal(res.headers['x-total'], total, url);
    }
    // The form sends its empty fields and the default status: the URL kept is the one without them.
    const sent = await get(cookie, '/console/errors?status=unresolved&assignee=&reported=&error_class=&q=&since=&host=hv-01&component=&sort=counter&direction=');
    assert.equal(sent.statusCode, 303);
    assert.equal(sent.headers.location, '/console/errors?host=hv-01&sort=counter');
    // A value the API refuses is said beside its field (422), as the API's 422 names it.
    const bad = await get(cookie, '/console/errors?sort=fame&status=closed&assignee=somebody');
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /<span class="field-error" id="sort-error">must be one of updated_at, created_at, counter<\/span>/);
    assert.match(bad.body, /<span class="field-error" id="status-error">must be one of unresolved, resolved, ignored, snoozed<\/span>/);
    assert.match(bad.body, /<span class="field-error" id="assignee-error">must be me, none or the id of a user<\/span>/);
  });

  it('draws the sparklines of a page on one scale, its busiest hour', async () => {
    await reportError(t, { error_class: 'Busy', message: 'busy', count: 10 });
    t.time.advance(1);
    await reportError(t, { error_class: 'Quiet', message: 'quiet' });
    const cookie = await session(t);
    const list = await get(cookie, '/console/errors');
    const svgs = [...list.body.matchAll(/<svg class="sparkline"[^>]*>.*?<\/svg>/g)].map((m) => m[0]);
    assert.equal(svgs.length, 2);
    const flat = (last: number) => [...Array.from({ length: 23 }, (_, i) => `${Math.round((i * 120) / 23 * 10) / 10},22`), `120,${last}`].join(' ');
    // Quiet's one occurrence is a tenth of Busy's ten: drawn a tenth as high, not as high.
    assert.equal(svgs[0], `<svg class="sparkline" role="img" aria-label="1 occurrence in the last 24 hours" data-scale="10" width="120" height="24" viewBox="0 0 120 24"><title>1 occurrence in the last 24 hours</title><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="${flat(20)}"/></svg>`);
    assert.equal(svgs[1], `<svg class="sparkline" role="img" aria-label="10 occurrences in the last 24 hours" data-scale="10" width="120" height="24" viewBox="0 0 120 24"><title>10 occurrences in the last 24 hours</title><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="${flat(2)}"/></svg>`);
  });

  it('changes the triage of the selected errors, or of all the filters select, and says how many', async () => {
    const ids: number[] = [];
    for (const [name, host] of [['One', 'hv-01'], ['Two', 'hv-01'], ['Three', 'hv-02'], ['Four', 'hv-01']]) ids.push(await reportError(t, { error_class: name as string, message: 'm', host: host as string }));
    const cookie = await session(t);
    const list = await get(cookie, '/console/errors?host=hv-01');
    const csrf = csrfOf(list.body);
    assert.match(list.body, /<button type="submit" name="action" value="resolve">Resolve<\/button>/);
    assert.match(list.body, /<input type="checkbox" id="scope-filter" name="scope" value="filter"> <span>Apply to all 3 matching the filters, not only the selected<\/span>/);

    const resolved = await post(cookie, csrf, '/console/errors/selected', [['back', '/console/errors?host=hv-01'], ['action', 'resolve'], ['id', String(ids[0])], ['id', String(ids[1])]]);
    assert.equal(resolved.statusCode, 303);
    assert.equal(resolved.headers.location, '/console/errors?host=hv-01&notice=triaged&action=resolve&count=2');
    const after = await get(cookie, resolved.headers.location);
    assert.match(after.body, /<p class="notice" role="status">Resolved 2 errors.<\/p>/);
    assert.deepEqual(classes(after.body), ['Four']);
    assert.deepEqual([(await triageOf(ids[0]!)).status, (await triageOf(ids[1]!)).status, (await triageOf(ids[2]!)).status], ['resolved', 'resolved', 'unresolved']);

    // Every unresolved error on hv-01 (the list's filters, from the page's URL), selected or not.
    const mine = await post(cookie, csrf, '/console/errors/selected', [['back', '/console/errors?host=hv-01'], ['action', 'assign_me'], ['scope', 'filter']]);
    assert.equal(mine.headers.location, '/console/errors?host=hv-01&notice=triaged&action=assign_me&count=1');
    assert.deepEqual(await Promise.all(ids.map(async (id) => (await triageOf(id)).assignee_id)), [null, null, null, t.admin.id]);
    t.time.advance(60);
    const snoozed = await post(cookie, csrf, '/console/errors/selected', [['back', '/console/errors?status=all'], ['action', 'snooze_1h'], ['scope', 'filter']]);
    assert.equal(snoozed.headers.location, '/console/errors?status=all&notice=triaged&action=snooze_1h&count=4');
    assert.match((await get(cookie, snoozed.headers.location)).body, /Snoozed 4 errors for 1 h./);
    assert.deepEqual(await triageOf(ids[2]!), { ...(await triageOf(ids[2]!)), status: 'snoozed', snoozed_until: '2026-11-20T11:01:00+00:00', snooze_occurrences: null });
  });

  it('shows the triage buttons only to holders of infrastructure_errors.triage, and its service refuses the others', async () => {
    const id = await reportError(t, { error_class: 'Watched', message: 'w' });
    await aliceMay('infrastructure_errors.read');
    const cookie = await session(t, ALICE.login, ALICE.password);
    const list = await get(cookie, '/console/errors');
    assert.equal(list.statusCode, 200);
    assert.deepEqual(classes(list.body), ['Watched']);
    assert.ok(!list.body.includes('value="resolve"'), 'no bulk triage buttons');
    const one = await get(cookie, `/console/errors/${id}`);
    assert.equal(one.statusCode, 200);
    assert.ok(!one.body.includes(`action="/console/errors/${id}/triage"`), 'no triage forms');
    assert.ok(!one.body.includes(`action="/console/errors/${id}/notes"`), 'no note form');
    const csrf = csrfOf(one.body);
    for (const [url, fields] of [
      ['/console/errors/selected', [['action', 'resolve'], ['id', String(id)]]],
      ['/console/errors/selected', [['action', 'ignore'], ['scope', 'filter'], ['back', '/console/errors']]],
      [`/console/errors/${id}/triage`, [['action', 'resolve']]],
      [`/console/errors/${id}/triage`, [['action', 'assign'], ['assignee_id', String(t.alice.id)]]],
      [`/console/errors/${id}/notes`, [['body', 'mine']]],
    ] as Array<[string, Array<[string, string]>]>) {
      const res = await post(cookie, csrf, url, fields);
      assert.equal(res.statusCode, 403, `${url} ${JSON.stringify(fields)}`);
      assert.match(res.body, /<h1>Not allowed<\/h1>/);
    }
    assert.deepEqual(await triageOf(id), { ...(await triageOf(id)), status: 'unresolved', assignee_id: null });
  });

  it('refuses the triage forms without the session\'s CSRF token, and changes nothing', async () => {
    const id = await reportError(t, { error_class: 'Kept', message: 'k' });
    const cookie = await session(t);
    const other = csrfOf((await get(await session(t), '/console/errors')).body);
    for (const [url, fields] of [
      ['/console/errors/selected', [['action', 'resolve'], ['id', String(id)]]],
      ['/console/errors/selected', [['action', 'resolve'], ['scope', 'filter'], ['back', '/console/errors']]],
      [`/console/errors/${id}/triage`, [['action', 'ignore']]],
      [`/console/errors/${id}/notes`, [['body', 'forged']]],
    ] as Array<[string, Array<[string, string]>]>) {
      for (const csrf of [undefined, other]) {
        const res = await post(cookie, csrf, url, fields);
        assert.equal(res.statusCode, 403, url);
        assert.match(res.body, /This form did not come from a page of this console/, url);
      }
    }
    assert.equal((await triageOf(id)).status, 'unresolved');
    assert.equal((await api('GET', `/sysadmin_tools/infrastructure/errors/${id}/notes.json`)).body, '[]');
  });

  it('triages one error on its page: resolve, snooze (bad input said beside its field, never a 500), assign, notes escaped, activity', async () => {
    const id = await reportError(t, { error_class: 'Paged', message: 'p' });
    const cookie = await session(t);
    const page = await get(cookie, `/console/errors/${id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<dt>status<\/dt><dd id="triage-status"><span class="status status-unresolved">unresolved<\/span><\/dd>\n<dt>assignee<\/dt><dd id="triage-assignee"><span class="muted">no one<\/span><\/dd>/);
    assert.match(page.body, /<select id="assignee_id" name="assignee_id"><option value="" selected>\(no one\)<\/option><option value="1">admin \(me\)<\/option><\/select>/);
    const csrf = csrfOf(page.body);

    t.time.advance(60);
    const resolved = await post(cookie, csrf, `/console/errors/${id}/triage`, [['action', 'resolve']]);
    assert.equal(resolved.statusCode, 303);
    assert.equal(resolved.headers.location, `/console/errors/${id}?notice=triaged`);
    const shown = await get(cookie, resolved.headers.location);
    assert.match(shown.body, /<p class="notice" role="status">Triage saved.<\/p>/);
    assert.match(shown.body, /<dt>resolved<\/dt><dd><time datetime="2026-11-20T10:01:00\+00:00">2026-11-20T10:01:00\+00:00<\/time> by admin<\/dd>/);

    const bad: Array<[Array<[string, string]>, string, RegExp]> = [
      [[['snoozed_until', '2026-11-20T09:00']], 'snoozed_until', /<span class="field-error" id="snoozed_until-error">until must be in the future<\/span>/],
      [[['snoozed_until', 'tomorrow']], 'snoozed_until', /<span class="field-error" id="snoozed_until-error">until must be a datetime such as 2026-11-20T10:00:00\+00:00<\/span>/],
      [[['snooze_occurrences', '-3']], 'snooze_occurrences', /<span class="field-error" id="snooze_occurrences-error">occurrences must be an integer from 1 to 1000000000<\/span>/],
      [[['snooze_occurrences', '1e9999']], 'snooze_occurrences', /occurrences must be an integer from 1 to 1000000000/],
      [[['snoozed_until', ''], ['snooze_occurrences', '']], 'status', /<p class="error" role="alert" id="triage-error">snoozed needs snoozed_until or snooze_occurrences<\/p>/],
    ];
    for (const [fields, field, message] of bad) {
      const res = await post(cookie, csrf, `/console/errors/${id}/triage`, [['action', 'snooze'], ...fields]);
      assert.equal(res.statusCode, 422, JSON.stringify(fields));
      assert.match(res.body, message, JSON.stringify(fields));
      if (field !== 'status') assert.match(res.body, new RegExp(`id="${field}" name="${field}"[^>]* value="${fields[0]![1]}" aria-invalid="true" aria-describedby="${field}-error"`), field);
    }
    const unknown = await post(cookie, csrf, `/console/errors/${id}/triage`, [['action', 'explode']]);
    assert.equal(unknown.statusCode, 422);
    assert.match(unknown.body, /must be resolve, ignore, reopen, snooze, assign or assign_me/);
    const nobody = await post(cookie, csrf, `/console/errors/${id}/triage`, [['action', 'assign'], ['assignee_id', String(t.alice.id)]]);
    assert.equal(nobody.statusCode, 422);
    assert.match(nobody.body, /<span class="field-error" id="assignee_id-error">assignee must be a user who may read infrastructure errors<\/span>/);
    assert.equal((await triageOf(id)).status, 'resolved');

    const snoozed = await post(cookie, csrf, `/console/errors/${id}/triage`, [['action', 'snooze'], ['snooze_occurrences', '5']]);
    assert.equal(snoozed.statusCode, 303);
    assert.match((await get(cookie, `/console/errors/${id}`)).body, /<dt>snoozed<\/dt><dd>for 5 more occurrences<\/dd>/);
    assert.equal((await post(cookie, csrf, `/console/errors/${id}/triage`, [['action', 'assign'], ['assignee_id', String(t.admin.id)]])).statusCode, 303);
    assert.equal((await triageOf(id)).assignee_id, t.admin.id);
    const assigned = await get(cookie, `/console/errors/${id}`);
    assert.match(assigned.body, /<dt>assignee<\/dt><dd id="triage-assignee">admin<\/dd>/);
    assert.ok(!assigned.body.includes('value="assign_me"'), 'no Assign to me for its assignee');
    assert.equal((await post(cookie, csrf, `/console/errors/${id}/triage`, [['action', 'assign'], ['assignee_id', '']])).statusCode, 303);
    assert.equal((await triageOf(id)).assignee_id, null);
    assert.match((await get(cookie, `/console/errors/${id}`)).body, /<input type="hidden" name="action" value="assign_me"><button type="submit">Assign to me<\/button>/);
    assert.equal((await post(cookie, csrf, `/console/errors/${id}/triage`, [['action', 'assign_me']])).statusCode, 303);
    assert.equal((await triageOf(id)).assignee_id, t.admin.id);

    const noted = await post(cookie, csrf, `/console/errors/${id}/notes`, [['body', SCRIPT]]);
    assert.equal(noted.statusCode, 303);
    assert.equal(noted.headers.location, `/console/errors/${id}?notice=noted`);
    const blank = await post(cookie, csrf, `/console/errors/${id}/notes`, [['body', '   ']]);
    assert.equal(blank.statusCode, 422);
    assert.match(blank.body, /<span class="field-error" id="body-error">note can&#39;t be blank<\/span>/);
    const withNote = await get(cookie, `/console/errors/${id}`);
    assert.ok(!withNote.body.includes('<script>alert'), 'the note is text');
    assert.match(withNote.body, /<p class="pre note-body">&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quoted&#39;<\/p>/);
    assert.match(withNote.body, /<h2 id="notes-heading">Notes \(1\)<\/h2>/);
    const activity = [...withNote.body.matchAll(/<span class="what">([^<]*)<\/span>/g)].map((m) => m[1]);
    assert.deepEqual(activity, ['first seen', 'status unresolved → resolved', 'status resolved → snoozed', 'assigned no one → admin', 'assigned admin → no one', 'assigned no one → admin', 'added a note']);

    const noteId = (JSON.parse((await api('GET', `/sysadmin_tools/infrastructure/errors/${id}/notes.json`)).body) as Array<{ note: { id: number } }>)[0]!.note.id;
    const deleted = await post(cookie, csrf, `/console/errors/${id}/notes/${noteId}/delete`);
    assert.equal(deleted.headers.location, `/console/errors/${id}?notice=note_deleted`);
    assert.equal((await api('GET', `/sysadmin_tools/infrastructure/errors/${id}/notes.json`)).body, '[]');
  });

  it('lets a note\'s author delete it, and no one else without infrastructure_errors.notes.delete', async () => {
    const id = await reportError(t, { error_class: 'Noted', message: 'n' });
    await aliceMay('infrastructure_errors.read', 'infrastructure_errors.notes');
    const admin = await session(t);
    assert.equal((await post(admin, csrfOf((await get(admin, `/console/errors/${id}`)).body), `/console/errors/${id}/notes`, [['body', 'by admin']])).statusCode, 303);
    const alice = await session(t, ALICE.login, ALICE.password);
    const csrf = csrfOf((await get(alice, `/console/errors/${id}`)).body);
    assert.equal((await post(alice, csrf, `/console/errors/${id}/notes`, [['body', 'by alice']])).statusCode, 303);
    const notes = (JSON.parse((await api('GET', `/sysadmin_tools/infrastructure/errors/${id}/notes.json`)).body) as Array<{ note: { id: number } }>).map((n) => n.note.id);
    const page = await get(alice, `/console/errors/${id}`);
    assert.ok(!page.body.includes(`/notes/${notes[0]}/delete`), 'no delete button on the administrator\'s note');
    assert.ok(page.body.includes(`/notes/${notes[1]}/delete`), 'a delete button on her own');
    assert.match(page.body, /<p class="note-meta">alice, /);
    const refused = await post(alice, csrf, `/console/errors/${id}/notes/${notes[0]}/delete`);
    assert.equal(refused.statusCode, 403);
    assert.equal((await post(alice, csrf, `/console/errors/${id}/notes/${notes[1]}/delete`)).statusCode, 303);
    assert.equal((JSON.parse((await api('GET', `/sysadmin_tools/infrastructure/errors/${id}/notes.json`)).body) as unknown[]).length, 1);
  });
});

describe('the console\'s audit log, as read (docs/console.md#audit-log)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const api = (method: 'POST' | 'PUT', url: string, body: unknown) => t.app.inject({ method, url, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const created = async (url: string, body: unknown, key: string) => {
    const res = await api('POST', url, body);
    assert.equal(res.statusCode, 201, res.body);
    return (JSON.parse(res.body) as Record<string, { id: number }>)[key]!.id;
  };
  /** The cells of the row of the event with this request id: target and changes, tags kept, times left out. */
  async function row(cookie: string, requestId: string): Promise<[string, string, string]> {
    const page = await t.app.inject({ method: 'GET', url: '/console/audit', headers: { cookie } });
    assert.equal(page.statusCode, 200);
    const tr = page.body.split('<tr>').find((part) => part.includes(`<td><code>${requestId}</code></td>`));
    assert.ok(tr, `no row of ${requestId}`);
    const cells = [...tr.matchAll(/<td>(.*?)<\/td>/gs)].map((m) => m[1]!);
    return [cells[1]!, cells[5]!, cells[6]!];
  }

  it('shows each change as field: before → after, with people, roles, groups and buckets by name (their ids only in links), never JSON', async () => {
    const bucket = await created('/billing/buckets.json', { bucket: { label: 'Gold <EU>' } }, 'bucket');
    const group = await created('/user_groups.json', { user_group: { label: 'Resellers' } }, 'user_group');
    const role = await created('/roles.json', { role: { label: 'Readers', permission_ids: [1] } }, 'role');
    const cookie = await session(t);
    const changed = await t.app.inject({
      method: 'PUT', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json', 'x-request-id': 'audit-diff-1' },
      payload: JSON.stringify({ user: { first_name: 'Alicia', role_ids: [role], bucket_id: bucket, user_group_id: group } }),
    });
    assert.equal(changed.statusCode, 204, changed.body);
    const [actor, target, changes] = await row(cookie, 'audit-diff-1');
    assert.equal(actor, `<a href="/console/users/${t.admin.id}">admin</a>`);
    assert.equal(target, `user <a href="/console/users/${t.alice.id}">alice</a>`);
    assert.doesNotMatch(changes, /[{}[\]]|&quot;/, 'no JSON');
    const lines = [...changes.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1]);
    assert.ok(lines.includes('<span class="field">first_name</span>: <del>Alice</del> → <ins>Alicia</ins>'), changes);
    assert.ok(lines.includes(`<span class="field">role_ids</span>: <del><a href="/console/roles/2">User</a></del> → <ins><a href="/console/roles/${role}">Readers</a></ins>`), changes);
    assert.ok(lines.includes(`<span class="field">bucket_id</span>: <del><span class="muted">none</span></del> → <ins><a href="/console/buckets/${bucket}">Gold &lt;EU&gt;</a></ins>`), changes);
    assert.ok(lines.includes(`<span class="field">user_group_id</span>: <del><span class="muted">none</span></del> → <ins><a href="/console/groups/${group}">Resellers</a></ins>`), changes);
  });
});
