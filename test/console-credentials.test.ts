import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';

// The console's credentials over a real socket, with the cookies a browser would send: its session is
// not the API's (docs/console.md#the-session-cookie), its forms ask the current password where the
// API's cookie does (docs/security.md#self-service), they are recorded as the session they came with
// (docs/security.md#the-audit-trail), and a locked sign-in says so (docs/security.md#brute-force).

const CONSOLE_COOKIE = /^_cmi_console=([^;\s]+); Path=\/console; HttpOnly; SameSite=Strict$/;
const API_COOKIE = /^_cmi_session=([^;\s]+); path=\/; HttpOnly; SameSite=Lax$/;
const CLEARED = '_cmi_console=; Max-Age=0; Path=/console; HttpOnly; SameSite=Strict';

/** The same app for the tests of a describe, served on a socket; `lockout` is CMI_LOCKOUT_MAX_FAILURES. */
function served(lockout: string) {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: lockout });
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  });
  after(() => t.close());

  interface Call { method?: string; cookie?: string; form?: Record<string, string>; authorization?: string; requestId?: string; headers?: Record<string, string> }
  const call = (path: string, { method = 'GET', cookie, form, authorization, requestId, headers = {} }: Call = {}) =>
    fetch(`${base}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        ...headers,
        ...(cookie === undefined ? {} : { cookie }),
        ...(authorization === undefined ? {} : { authorization }),
        ...(requestId === undefined ? {} : { 'x-request-id': requestId }),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() }),
    });

  const signIn = (login: string, password: string) => call('/console/sign-in', { method: 'POST', form: { login, password } });

  /** Signs in to the console: the Cookie header of its session. */
  async function consoleCookie(login = ADMIN.login, password = ADMIN.password): Promise<string> {
    const res = await signIn(login, password);
    assert.equal(res.status, 303, await res.text());
    const match = CONSOLE_COOKIE.exec(res.headers.getSetCookie()[0] ?? '');
    assert.ok(match, String(res.headers.getSetCookie()));
    return `_cmi_console=${match[1]}`;
  }

  /** The CSRF token of a console page's forms. */
  async function csrfOf(cookie: string, path: string): Promise<string> {
    const res = await call(path, { cookie });
    assert.equal(res.status, 200, path);
    const match = /name="_csrf" value="([^"]+)"/.exec(await res.text());
    assert.ok(match, 'no CSRF field');
    return match[1] as string;
  }

  return { get t() { return t; }, call, signIn, consoleCookie, csrfOf };
}

describe('the console\'s credentials, over HTTP', () => {
  const served_ = served('10');
  const { call, consoleCookie, csrfOf } = served_;
  let t: TestApp;
  before(() => {
    t = served_.t;
  });

  const aliceRow = () => t.database.db.selectFrom('users').select(['login', 'email', 'first_name', 'api_key_hash', 'password_hash']).where('id', '=', t.alice.id).executeTakeFirstOrThrow();
  const apiKeyRows = async () => (await t.database.db.selectFrom('user_api_keys').select(['user_id', 'description']).orderBy('id').execute()).map((row) => [Number(row.user_id), row.description]);

  it('refuses the API\'s session token as the console\'s cookie, and the console\'s as the API\'s', async () => {
    const basic = await call('/version.json', { authorization: t.basic(ADMIN.login, ADMIN.password) });
    assert.equal(basic.status, 200);
    const apiToken = API_COOKIE.exec(basic.headers.getSetCookie()[0] ?? '')?.[1];
    assert.ok(apiToken);
    const consoleToken = (await consoleCookie()).slice('_cmi_console='.length);

    // Each opens its own side.
    assert.equal((await call('/users.json', { cookie: `_cmi_session=${apiToken}` })).status, 200);
    assert.equal((await call('/console/users', { cookie: `_cmi_console=${consoleToken}` })).status, 200);

    // The API's token as the console's cookie: no page, and no form (a new key for alice), but the sign-in form.
    const asConsole = await call('/console/users', { cookie: `_cmi_console=${apiToken}` });
    assert.deepEqual([asConsole.status, asConsole.headers.get('location'), asConsole.headers.getSetCookie()], [303, '/console/sign-in?ended=1&next=%2Fconsole%2Fusers', [CLEARED]]);
    const forged = await call(`/console/users/${t.alice.id}/api-key`, { method: 'POST', cookie: `_cmi_console=${apiToken}`, form: { _csrf: 'x' } });
    assert.deepEqual([forged.status, forged.headers.get('location')], [303, '/console/sign-in?ended=1&next=%2Fconsole']);
    assert.equal((await aliceRow()).api_key_hash, null);

    // The console's token as the API's cookie: refused like no credential, for a read and a change.
    const asApi = await call('/users.json', { cookie: `_cmi_session=${consoleToken}` });
    assert.deepEqual([asApi.status, await asApi.text()], [401, '{"errors":{"base":["Access denied"]}}']);
    const change = await call(`/users/${t.alice.id}/make_new_api_key.json`, { method: 'POST', cookie: `_cmi_session=${consoleToken}`, headers: { 'x-requested-with': 'test' } });
    assert.equal(change.status, 401);
    assert.equal((await aliceRow()).api_key_hash, null);
  });

  it('asks the current password to make an API key or change a login or email (422 without it, nothing changed), not for other fields', async () => {
    const cookie = await consoleCookie();
    const page = `/console/users/${t.alice.id}`;
    const csrf = await csrfOf(cookie, page);
    const post = (path: string, fields: Record<string, string>) => call(`${page}${path}`, { method: 'POST', cookie, form: { _csrf: csrf, ...fields } });
    const before = await aliceRow();
    const details = { login: ALICE.login, email: ALICE.email, first_name: 'Alice', last_name: 'User', time_zone: '', locale: '' };

    // The form carries the field.
    const shown = await (await call(page, { cookie })).text();
    for (const form of ['details', 'new-key', 'add-key']) assert.ok(shown.includes(`<input id="${form}-current_password" name="current_password" type="password"`), form);

    for (const [current, message] of [[undefined, 'can&#39;t be blank'], ['not-it', 'is incorrect']] as const) {
      const withIt: Record<string, string> = current === undefined ? {} : { current_password: current };
      const key = await post('/api-key', withIt);
      assert.equal(key.status, 422);
      assert.ok((await key.text()).includes(`<span class="field-error" id="new-key-current_password-error">current password ${message}</span>`));
      const added = await post('/api-keys', { description: 'stolen', ...withIt });
      assert.equal(added.status, 422);
      assert.ok((await added.text()).includes(`<span class="field-error" id="add-key-current_password-error">current password ${message}</span>`));
      for (const changed of [{ email: 'thief@example.com' }, { login: 'thief' }]) {
        const saved = await post('', { ...details, ...changed, ...withIt });
        assert.equal(saved.status, 422, JSON.stringify(changed));
        const body = await saved.text();
        assert.ok(body.includes(`<span class="field-error" id="details-current_password-error">current password ${message}</span>`), body);
        assert.ok(!body.includes('not-it'), 'the password is not written back');
      }
    }
    assert.deepEqual(await aliceRow(), before);
    assert.deepEqual(await apiKeyRows(), []);

    // Another field alone needs none (the form sends the login and the email unchanged).
    const renamed = await post('', { ...details, first_name: 'Alicia' });
    assert.deepEqual([renamed.status, renamed.headers.get('location')], [303, `${page}?notice=saved`]);
    // With the administrator's own password, each is done.
    const email = await post('', { ...details, first_name: 'Alicia', email: 'alice2@example.com', current_password: ADMIN.password });
    assert.equal(email.status, 303);
    const key = await post('/api-key', { current_password: ADMIN.password });
    assert.equal(key.status, 200);
    assert.match(await key.text(), /<input id="api-key" readonly value="[0-9a-f]{64}"/);
    const added = await post('/api-keys', { description: 'billing', current_password: ADMIN.password });
    assert.equal(added.status, 200);
    const after = await aliceRow();
    assert.deepEqual([after.login, after.email, after.first_name, after.password_hash], [ALICE.login, 'alice2@example.com', 'Alicia', before.password_hash]);
    assert.notEqual(after.api_key_hash, null);
    assert.deepEqual(await apiKeyRows(), [[t.alice.id, 'default'], [t.alice.id, 'billing']]);
  });

  it('records every change made through a console form as the session it came with: its login, `session`, the address and the request id', async () => {
    const cookie = await consoleCookie();
    const first = await t.database.db.selectFrom('audit_events').select(({ fn }) => fn.max('id').as('id')).executeTakeFirstOrThrow();
    const page = `/console/users/${t.alice.id}`;
    const csrf = await csrfOf(cookie, page);
    let n = 0;
    const post = async (path: string, fields: Record<string, string> = {}) => {
      const requestId = `console-form-${(n += 1)}`;
      const res = await call(path, { method: 'POST', cookie, requestId, form: { _csrf: csrf, ...fields } });
      assert.ok(res.status === 303 || res.status === 200, `${path}: ${res.status} ${await res.text()}`);
      assert.equal(res.headers.get('x-request-id'), requestId);
      return res;
    };
    const alice = await aliceRow();
    await post(page, { login: alice.login, email: alice.email, first_name: 'Ally', last_name: 'User', time_zone: '', locale: '' });
    await post(`${page}/suspend`);
    await post(`${page}/activate`);
    await post(`${page}/api-key`, { current_password: ADMIN.password });
    await post(`${page}/api-keys`, { description: 'laptop', current_password: ADMIN.password });
    const [key] = await t.database.db.selectFrom('user_api_keys').select('id').where('description', '=', 'laptop').execute();
    await post(`${page}/api-keys/${Number(key!.id)}/revoke`);
    await post('/console/users', { login: 'bob', email: 'bob@example.com', first_name: 'Bob', last_name: 'B', password: 'bob-password', role: 'user' });
    const bob = await t.database.db.selectFrom('users').select('id').where('login', '=', 'bob').executeTakeFirstOrThrow();
    await post(`/console/users/${Number(bob.id)}/delete`);
    await post('/console/buckets', { label: 'Console bucket', currency_code: 'EUR', monthly_price: '2' });
    await post('/console/sign-out');
    const rows = await t.database.db.selectFrom('audit_events').select(['actor_id', 'actor_login', 'credential', 'address', 'request_id', 'action']).where('id', '>', Number(first.id)).orderBy('id').execute();
    assert.deepEqual(rows.map((row) => [Number(row.actor_id), row.actor_login, row.credential, row.address, row.request_id, row.action]), [
      ['user.update', 1], ['user.suspend', 2], ['user.activate', 3], ['user.api_key.create', 4], ['user.api_key.create', 5], ['user.api_key.revoke', 6],
      ['user.create', 7], ['user.delete', 8], ['bucket.create', 9], ['session.delete', 10],
    ].map(([action, i]) => [t.admin.id, ADMIN.login, 'session', '127.0.0.1', `console-form-${i}`, action]));
  });

});

describe('the console\'s sign-in under the lockout, over HTTP', () => {
  const served_ = served('3');
  const { call, signIn } = served_;
  let t: TestApp;
  before(() => {
    t = served_.t;
  });

  it('says on the sign-in page, to a right password as to a wrong one and for any login, what is locked, until when, and the command that ends it', async () => {
    for (const name of [ALICE.login, 'ghost']) {
      for (let i = 1; i <= 3; i++) assert.equal((await signIn(name, `wrong-${i}`)).status, 401);
      for (const password of [ALICE.password, 'wrong-4']) {
        const locked = await signIn(name, password);
        assert.deepEqual([locked.status, locked.headers.get('retry-after'), locked.headers.getSetCookie()], [429, '900', []]);
        assert.ok((await locked.text()).includes(`<p class="error" role="alert">Too many failed logins for &quot;${name}&quot;: it is locked until 2026-11-20T10:15:00Z, or until an administrator runs: cmi local users unlock ${name}</p>`));
      }
    }
    // The API says the same to HTTP Basic.
    const api = await call('/version.json', { authorization: t.basic(ALICE.login, ALICE.password) });
    assert.deepEqual([api.status, await api.text()], [429, '{"errors":{"base":["Too many failed logins for \\"alice\\": it is locked until 2026-11-20T10:15:00Z, or until an administrator runs: cmi local users unlock alice"]}}']);
  });
});
