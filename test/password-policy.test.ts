import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { ADMIN, ALICE, createTestApp, type TestApp } from './support/app.js';
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
