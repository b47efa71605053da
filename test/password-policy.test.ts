import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { CmiClient, CmiValidationError } from '../src/client/index.js';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { runCmi } from './support/cli.js';
import { forbiddenJson, JSON_TYPE, XML_DECLARATION, XML_TYPE } from './support/error-reports.js';
import { eventually } from './support/eventually.js';

// The password policy (docs/security.md#password-policy), over HTTP, on the database DATABASE_URL names.

const DEFAULTS = { min_length: 8, require_upper: false, require_lower: false, require_digit: false, require_symbol: false, history: 0, expiry_months: 0, lockout_attempts: 10, lockout_minutes: 15 };
const UPPER = 'must contain an upper-case letter';
const LOWER = 'must contain a lower-case letter';
const DIGIT = 'must contain a digit';
const SYMBOL = 'must contain a symbol (a character that is neither a letter nor a digit)';
const expiredMessage = (id: number) =>
  `Your password has expired (the password policy's expiry_months): it is accepted only to change it, with PUT /users/${id}.json ` +
  '{"user": {"password": "<new>", "current_password": "<current>"}}; API keys are not affected (docs/security.md#password-policy)';

interface Call {
  auth?: string;
  body?: unknown;
  contentType?: string;
  app?: FastifyInstance;
}

function call(t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, options: Call = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: options.auth ?? t.adminAuth };
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return (options.app ?? t.app).inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

const errorsJson = (errors: Record<string, string[]>) => JSON.stringify({ errors });

async function putPolicy(t: TestApp, fields: Record<string, unknown>, app?: FastifyInstance): Promise<void> {
  const res = await call(t, 'PUT', '/settings/password_policy.json', { body: { password_policy: fields }, ...(app ? { app } : {}) });
  assert.equal(res.statusCode, 200, res.body);
}

describe('the password policy', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('GET shows the defaults in JSON and XML', async () => {
    const json = await call(t, 'GET', '/settings/password_policy.json');
    assert.equal(json.statusCode, 200);
    assert.equal(json.headers['content-type'], JSON_TYPE);
    assert.equal(json.body, JSON.stringify({ password_policy: DEFAULTS }));
    const xml = await call(t, 'GET', '/settings/password_policy.xml');
    assert.equal(xml.statusCode, 200);
    assert.equal(xml.headers['content-type'], XML_TYPE);
    assert.equal(xml.body, `${XML_DECLARATION}<password_policy>
  <min_length type="integer">8</min_length>
  <require_upper type="boolean">false</require_upper>
  <require_lower type="boolean">false</require_lower>
  <require_digit type="boolean">false</require_digit>
  <require_symbol type="boolean">false</require_symbol>
  <history type="integer">0</history>
  <expiry_months type="integer">0</expiry_months>
  <lockout_attempts type="integer">10</lockout_attempts>
  <lockout_minutes type="integer">15</lockout_minutes>
</password_policy>
`);
  });

  it('PUT changes the fields given (JSON, then XML), keeps the others, and audits before and after, no secret', async () => {
    const res = await call(t, 'PUT', '/settings/password_policy.json', { body: { password_policy: { min_length: 12, require_digit: true, history: 5 } } });
    assert.equal(res.statusCode, 200, res.body);
    const changed = { ...DEFAULTS, min_length: 12, require_digit: true, history: 5 };
    assert.equal(res.body, JSON.stringify({ password_policy: changed }));
    const xml = await call(t, 'PUT', '/settings/password_policy.xml', {
      body: '<password_policy><require_upper>true</require_upper><expiry_months>6</expiry_months></password_policy>', contentType: 'application/xml',
    });
    assert.equal(xml.statusCode, 200, xml.body);
    assert.match(xml.body, /<require_upper type="boolean">true<\/require_upper>\n/);
    const shown = await call(t, 'GET', '/settings/password_policy.json');
    assert.equal(shown.body, JSON.stringify({ password_policy: { ...changed, require_upper: true, expiry_months: 6 } }));
    const audited = await t.database.db.selectFrom('audit_events').select(['actor_login', 'credential', 'action', 'target_type', 'target_id', 'changes'])
      .where('action', '=', 'password_policy.update').orderBy('id').execute();
    assert.deepEqual(audited.map((row) => ({ ...row, target_id: row.target_id === null ? null : Number(row.target_id), changes: JSON.parse(row.changes) as unknown })), [
      { actor_login: 'admin', credential: 'password', action: 'password_policy.update', target_type: 'password_policy', target_id: null, changes: { min_length: [8, 12], require_digit: [false, true], history: [0, 5] } },
      { actor_login: 'admin', credential: 'password', action: 'password_policy.update', target_type: 'password_policy', target_id: null, changes: { require_upper: [false, true], expiry_months: [0, 6] } },
    ]);
  });

  it('PUT names every bad field in one 422 and changes nothing', async () => {
    const res = await call(t, 'PUT', '/settings/password_policy.json', {
      body: { password_policy: { min_length: 7, require_upper: 'yes', history: 25, expiry_months: -1, lockout_attempts: 0, lockout_minutes: 1441, colour: 'red' } },
    });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, errorsJson({
      colour: ['is not a field of the password policy'],
      min_length: ['must be an integer from 8 to 128'],
      history: ['must be an integer from 0 to 24'],
      expiry_months: ['must be an integer from 0 to 120'],
      lockout_attempts: ['must be an integer from 1 to 1000'],
      lockout_minutes: ['must be an integer from 1 to 1440'],
      require_upper: ['must be true or false'],
    }));
    assert.equal((await call(t, 'GET', '/settings/password_policy.json')).body, JSON.stringify({ password_policy: DEFAULTS }));
  });

  it('is refused to a user without password_policy.manage, reading or changing', async () => {
    for (const method of ['GET', 'PUT'] as const) {
      const res = await call(t, method, '/settings/password_policy.json', { auth: t.aliceAuth, ...(method === 'PUT' ? { body: { password_policy: { min_length: 20 } } } : {}) });
      assert.equal(res.statusCode, 403);
      assert.equal(res.body, forbiddenJson('password_policy.manage'));
    }
    assert.equal((await call(t, 'GET', '/settings/password_policy.json')).body, JSON.stringify({ password_policy: DEFAULTS }));
  });

  it('refuses a new password naming each rule it breaks: on create, on an administrator\'s edit, on a user\'s own change', async () => {
    await putPolicy(t, { min_length: 10, require_upper: true, require_lower: true, require_digit: true, require_symbol: true });
    const created = await call(t, 'POST', '/users.json', { body: { user: { login: 'bob', email: 'bob@example.com', password: 'short' } } });
    assert.equal(created.statusCode, 422);
    assert.equal(created.body, errorsJson({ password: ['is too short (minimum is 10 characters)', UPPER, DIGIT, SYMBOL] }));
    const edited = await call(t, 'PUT', '/users/2.json', { body: { user: { password: 'ALLUPPERCASE' } } });
    assert.equal(edited.statusCode, 422);
    assert.equal(edited.body, errorsJson({ password: [LOWER, DIGIT, SYMBOL] }));
    const own = await call(t, 'PUT', '/users/2.json', { auth: t.aliceAuth, body: { user: { password: 'lowercase-only', current_password: ALICE.password } } });
    assert.equal(own.statusCode, 422);
    assert.equal(own.body, errorsJson({ password: [UPPER, DIGIT] }));
    const xml = await call(t, 'POST', '/users.xml', { body: '<user><login>bob</login><email>bob@example.com</email><password>abcdefghij</password></user>', contentType: 'application/xml' });
    assert.equal(xml.statusCode, 422);
    assert.equal(xml.body, `${XML_DECLARATION}<errors>\n  <error>Password ${UPPER}</error>\n  <error>Password ${DIGIT}</error>\n  <error>Password ${SYMBOL}</error>\n</errors>\n`);
    // One that keeps every rule is taken.
    const fine = await call(t, 'POST', '/users.json', { body: { user: { login: 'bob', email: 'bob@example.com', password: 'Good-passw0rd' } } });
    assert.equal(fine.statusCode, 201, fine.body);
    assert.equal((await call(t, 'GET', '/users/3.json', { auth: t.basic('bob', 'Good-passw0rd') })).statusCode, 200);
  });

  it('refuses one of the last N passwords, the current one included, and keeps only the hashes it needs', async () => {
    await putPolicy(t, { history: 3 });
    const change = (password: string, current: string) => call(t, 'PUT', '/users/2.json', { auth: t.basic(ALICE.login, current), body: { user: { password, current_password: current } } });
    const current = await change(ALICE.password, ALICE.password);
    assert.equal(current.statusCode, 422);
    assert.equal(current.body, errorsJson({ password: ['must not be one of the last 3 passwords'] }));
    assert.equal((await change('second-password', ALICE.password)).statusCode, 204);
    assert.equal((await change('third-password', 'second-password')).statusCode, 204);
    const reused = await change(ALICE.password, 'third-password');
    assert.equal(reused.statusCode, 422);
    assert.equal(reused.body, errorsJson({ password: ['must not be one of the last 3 passwords'] }));
    // An administrator's edit is held to it too.
    const byAdmin = await call(t, 'PUT', '/users/2.json', { body: { user: { password: 'second-password' } } });
    assert.equal(byAdmin.statusCode, 422);
    assert.equal(byAdmin.body, errorsJson({ password: ['must not be one of the last 3 passwords'] }));
    assert.equal((await change('fourth-password', 'third-password')).statusCode, 204);
    // Three back is now free again: the last three are fourth, third and second.
    assert.equal((await change(ALICE.password, 'fourth-password')).statusCode, 204);
    const kept = await t.database.db.selectFrom('password_history').select('user_id').where('user_id', '=', 2).execute();
    assert.equal(kept.length, 2);
    const shown = await call(t, 'GET', '/users/2.json');
    assert.doesNotMatch(shown.body, /history|argon2/);
  });

  it('an expired password is accepted only to change it, with a 403 saying how; API keys are not affected; the change lifts it', async () => {
    const key = await call(t, 'POST', '/users/2/user_api_keys.json', { body: { user_api_key: { description: 'deploys' } } });
    assert.equal(key.statusCode, 201, key.body);
    const apiKey = (JSON.parse(key.body) as { user_api_key: { api_key: string } }).user_api_key.api_key;
    await putPolicy(t, { expiry_months: 1 });
    assert.equal((await call(t, 'GET', '/users/2.json', { auth: t.aliceAuth })).statusCode, 200);
    t.time.set('2026-12-20T10:00:00.000Z');
    const refused = await call(t, 'GET', '/users/2.json', { auth: t.aliceAuth });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.body, errorsJson({ base: [expiredMessage(2)] }));
    const withoutCurrent = await call(t, 'PUT', '/users/2.json', { auth: t.aliceAuth, body: { user: { first_name: 'Al' } } });
    assert.equal(withoutCurrent.statusCode, 403);
    assert.equal(withoutCurrent.body, errorsJson({ base: [expiredMessage(2)] }));
    assert.equal((await call(t, 'PUT', '/users/1.json', { auth: t.aliceAuth, body: { user: { password: 'x-new-password', current_password: ALICE.password } } })).statusCode, 403);
    // The key works as before.
    assert.equal((await call(t, 'GET', '/users/2.json', { auth: t.basic(ALICE.email, apiKey) })).statusCode, 200);
    // Administrators' passwords expire too (the admin was created at the same time).
    assert.equal((await call(t, 'GET', '/users.json')).statusCode, 403);
    const changed = await call(t, 'PUT', '/users/2.json', { auth: t.aliceAuth, body: { user: { password: 'alice-fresh-password', current_password: ALICE.password } } });
    assert.equal(changed.statusCode, 204, changed.body);
    assert.equal((await call(t, 'GET', '/users/2.json', { auth: t.basic(ALICE.login, 'alice-fresh-password') })).statusCode, 200);
  });

  it('the policy\'s lockout values govern the lockout', async () => {
    await putPolicy(t, { lockout_attempts: 2, lockout_minutes: 1 });
    const wrong = t.basic(ALICE.login, 'wrong-password');
    assert.equal((await call(t, 'GET', '/users/2.json', { auth: wrong })).statusCode, 401);
    assert.equal((await call(t, 'GET', '/users/2.json', { auth: wrong })).statusCode, 401);
    const locked = await call(t, 'GET', '/users/2.json', { auth: t.aliceAuth });
    assert.equal(locked.statusCode, 429, locked.body);
    assert.equal(locked.headers['retry-after'], '60');
    t.time.advance(61);
    assert.equal((await call(t, 'GET', '/users/2.json', { auth: t.aliceAuth })).statusCode, 200);
  });

  it('a change made by one process governs another on the same database', async () => {
    const other = await t.secondProcess();
    try {
      await putPolicy(t, { require_digit: true, lockout_attempts: 1 });
      const refused = await call(t, 'POST', '/users.json', { app: other.app, body: { user: { login: 'bob', email: 'bob@example.com', password: 'no-digits-here' } } });
      assert.equal(refused.statusCode, 422);
      assert.equal(refused.body, errorsJson({ password: [DIGIT] }));
      assert.equal((await call(t, 'GET', '/settings/password_policy.json', { app: other.app })).body, JSON.stringify({ password_policy: { ...DEFAULTS, require_digit: true, lockout_attempts: 1 } }));
      // Its lockout follows within a second (the policy is read again each second).
      await eventually(async () => {
        const name = `nobody-${Math.random()}`;
        assert.equal((await call(t, 'GET', '/version.json', { app: other.app, auth: t.basic(name, 'x') })).statusCode, 401);
        assert.equal((await call(t, 'GET', '/version.json', { app: other.app, auth: t.basic(name, 'x') })).statusCode, 429);
      }, 5000, 100);
    } finally {
      await other.close();
    }
  });

  it('ADMIN keeps working while no policy asks more', async () => {
    assert.equal((await call(t, 'GET', '/users.json', { auth: t.basic(ADMIN.login, ADMIN.password) })).statusCode, 200);
  });
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const csrfOf = (body: string): string => /name="_csrf" value="([^"]+)"/.exec(body)![1]!;

async function consoleSession(t: TestApp, login: string, password: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: new URLSearchParams({ login, password }).toString() });
  assert.equal(res.statusCode, 303, res.body);
  return `_cmi_console=${/^_cmi_console=([^;\s]+);/.exec(String(res.headers['set-cookie']))![1]}`;
}

describe('the password policy in the console', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('an administrator sees and changes it with the CSRF token; a bad value is shown with its message; a user is refused', async () => {
    const cookie = await consoleSession(t, ADMIN.login, ADMIN.password);
    const shown = await t.app.inject({ url: '/console/settings/password-policy', headers: { cookie } });
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /<a href="\/console\/settings\/password-policy">Password policy<\/a>/);
    assert.match(shown.body, /<input id="min_length" name="min_length" type="text" maxlength="9" required value="8"/);
    const form = (fields: Record<string, string>, csrf = csrfOf(shown.body)) => new URLSearchParams({ _csrf: csrf, min_length: '12', history: '2', expiry_months: '0', lockout_attempts: '10', lockout_minutes: '15', ...fields }).toString();
    const forged = await t.app.inject({ method: 'POST', url: '/console/settings/password-policy', headers: { ...FORM, cookie }, payload: form({}, 'forged') });
    assert.equal(forged.statusCode, 403);
    const bad = await t.app.inject({ method: 'POST', url: '/console/settings/password-policy', headers: { ...FORM, cookie }, payload: form({ history: '99' }) });
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /<span class="field-error" id="history-error">history must be an integer from 0 to 24<\/span>/);
    const saved = await t.app.inject({ method: 'POST', url: '/console/settings/password-policy', headers: { ...FORM, cookie }, payload: form({ require_digit: 'true' }) });
    assert.equal(saved.statusCode, 303);
    assert.equal(saved.headers.location, '/console/settings/password-policy?notice=saved');
    assert.equal((await call(t, 'GET', '/settings/password_policy.json')).body, JSON.stringify({ password_policy: { ...DEFAULTS, min_length: 12, require_digit: true, history: 2 } }));
    const alice = await consoleSession(t, ALICE.login, ALICE.password);
    assert.equal((await t.app.inject({ url: '/console/settings/password-policy', headers: { cookie: alice } })).statusCode, 403);
  });

  it('after sign-in with an expired password, every page sends to the own page, whose form changes it', async () => {
    await putPolicy(t, { expiry_months: 3, require_digit: true });
    t.time.set('2027-03-01T00:00:00.000Z');
    const cookie = await consoleSession(t, ALICE.login, ALICE.password);
    const home = await t.app.inject({ url: '/console', headers: { cookie } });
    assert.equal(home.statusCode, 303);
    assert.equal(home.headers.location, '/console/users/2?notice=password_expired');
    const list = await t.app.inject({ url: '/console/users', headers: { cookie } });
    assert.equal(list.headers.location, '/console/users/2?notice=password_expired');
    const own = await t.app.inject({ url: '/console/users/2?notice=password_expired', headers: { cookie } });
    assert.equal(own.statusCode, 200, JSON.stringify(own.headers));
    assert.match(own.body, /Your password has expired: change it below to go on/);
    const weak = await t.app.inject({ method: 'POST', url: '/console/users/2/password', headers: { ...FORM, cookie }, payload: new URLSearchParams({ _csrf: csrfOf(own.body), password: 'no-digits-at-all', current_password: ALICE.password }).toString() });
    assert.equal(weak.statusCode, 422);
    assert.match(weak.body, /must contain a digit/);
    const changed = await t.app.inject({ method: 'POST', url: '/console/users/2/password', headers: { ...FORM, cookie }, payload: new URLSearchParams({ _csrf: csrfOf(own.body), password: 'fresh-passw0rd', current_password: ALICE.password }).toString() });
    assert.equal(changed.statusCode, 303);
    const again = await consoleSession(t, ALICE.login, 'fresh-passw0rd');
    assert.equal((await t.app.inject({ url: '/console/users', headers: { cookie: again } })).statusCode, 200);
  });
});

describe('the password policy through the client and cmi settings password-policy', () => {
  let t: TestApp;
  let url: string;
  let home: string;
  let env: Record<string, string>;
  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
    url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-password-policy-'));
    env = {
      XDG_CONFIG_HOME: join(home, 'config'), CMI_PROFILE: '', CMI_API_KEY: '', NO_COLOR: '', DATABASE_URL: `sqlite:${join(home, 'unused.sqlite3')}`,
      CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password,
    };
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('client.passwordPolicy gets and updates it in JSON and XML; a bad field is a CmiValidationError', async () => {
    for (const format of ['json', 'xml'] as const) {
      const client = new CmiClient({ baseUrl: url, login: ADMIN.login, password: ADMIN.password, format });
      assert.deepEqual(await client.passwordPolicy.update({ min_length: format === 'json' ? 9 : 10, require_symbol: true }), { ...DEFAULTS, min_length: format === 'json' ? 9 : 10, require_symbol: true });
      assert.deepEqual(await client.passwordPolicy.get(), { ...DEFAULTS, min_length: format === 'json' ? 9 : 10, require_symbol: true });
      await assert.rejects(client.passwordPolicy.update({ history: 30 }), (error: unknown) => error instanceof CmiValidationError && error.message === `422: ${format === 'json' ? 'history' : 'History'} must be an integer from 0 to 24`);
    }
  });

  it('cmi settings password-policy show and set', async () => {
    const set = await runCmi(['settings', 'password-policy', 'set', '--min-length', '14', '--require-upper', 'true', '--lockout-minutes', '30'], env);
    assert.equal(set.stderr, '');
    assert.equal(set.code, 0);
    assert.match(set.stdout, /^Password policy saved:\nmin_length: +14\n/);
    const shown = await runCmi(['settings', 'password-policy', 'show', '--json'], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual(JSON.parse(shown.stdout), { password_policy: { ...DEFAULTS, min_length: 14, require_upper: true, require_symbol: true, lockout_minutes: 30 } });
    const bad = await runCmi(['settings', 'password-policy', 'set', '--history', 'lots'], env);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /history must be an integer from 0 to 24/);
    const none = await runCmi(['settings', 'password-policy', 'set'], env);
    assert.notEqual(none.code, 0);
    assert.match(none.stderr, /nothing to change/);
  });
});
