import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ALICE, createTestApp, type TestApp } from './support/app.js';
import { assertAccessDenied, cookieOnly, login, withCookie } from './support/http.js';
import { OPERATOR } from '../src/roles/authorization.js';
import { nameCollisions, reportNameCollisions } from '../src/users/name-collisions.js';
import { usersService } from '../src/users/users.service.js';
import { usersRepository } from '../src/users/users.store.js';
import { CROSS_SITE_REFUSAL } from '../src/users/request-gate.js';
import type { Unprocessable } from '../src/shared/problems.js';
import { auditTrailOn } from '../src/audit/audit-trail.js';

// What a hostile client did to accounts (docs/security.md#one-name-one-account, #self-service,
// #the-session-cookie-and-csrf), held. Each case runs on
// SQLite, and on PostgreSQL with DATABASE_URL=postgres://...

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.close());

function send(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Record<string, string>, body?: unknown): Promise<LightMyRequestResponse> {
  const all = body === undefined ? headers : { ...headers, 'content-type': 'application/json' };
  return t.app.inject({ method, url, headers: all, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
}

describe('an email that grows in lower case (finding 5)', () => {
  // U+0130 is one UTF-16 unit and lower-cases to "i" + U+0307: 205 units sent, 405 stored.
  const grows = `${'\u0130'.repeat(200)}@x.io`;
  const TOO_LONG = '{"errors":{"email":["is too long (maximum is 254 characters)"]}}';

  it('is measured as it is stored: 422 on creating a user, nothing stored', async () => {
    assert.equal(grows.length, 205);
    assert.equal(grows.toLowerCase().length, 405);
    const res = await send('POST', '/users.json', { authorization: t.adminAuth }, { user: { login: 'dotted', email: grows, password: 'a-password' } });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.body, TOO_LONG);
    const list = await send('GET', '/users.json', { authorization: t.adminAuth });
    assert.equal(list.headers['x-total'], '2');
  });

  it('is measured as it is stored: 422 on changing an email', async () => {
    const res = await send('PUT', `/users/${t.alice.id}.json`, { authorization: t.adminAuth }, { user: { email: grows } });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.body, TOO_LONG);
    const alice = await send('GET', `/users/${t.alice.id}.json`, { authorization: t.adminAuth });
    assert.equal((JSON.parse(alice.body) as { user: { email: string } }).user.email, ALICE.email);
  });

  it('is taken when its lower case fits', async () => {
    const fits = `${'\u0130'.repeat(100)}@x.io`;
    const res = await send('POST', '/users.json', { authorization: t.adminAuth }, { user: { login: 'dotted', email: fits, password: 'a-password' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal((JSON.parse(res.body) as { user: { email: string } }).user.email, fits.toLowerCase());
  });
});

describe('one name, one account (finding 4)', () => {
  const create = (user: Record<string, string>) => send('POST', '/users.json', { authorization: t.adminAuth }, { user: { password: 'a-password', ...user } });

  it('refuses an email that is another account\'s login in another case, naming the field', async () => {
    const bob = await create({ login: 'Bob@example.com', email: 'bob-own@example.com' });
    assert.equal(bob.statusCode, 201, bob.body);
    const res = await create({ login: 'mallory', email: 'bob@example.com' });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.body, '{"errors":{"email":["has already been taken"]}}');
    const changed = await send('PUT', `/users/${t.alice.id}.json`, { authorization: t.adminAuth }, { user: { email: 'BOB@example.com' } });
    assert.equal(changed.statusCode, 422, changed.body);
    assert.equal(changed.body, '{"errors":{"email":["has already been taken"]}}');
  });

  it('refuses a login that is another account\'s login in another case', async () => {
    const res = await create({ login: 'ALICE', email: 'other@example.com' });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.body, '{"errors":{"login":["has already been taken"]}}');
    const changed = await send('PUT', `/users/${t.admin.id}.json`, { authorization: t.adminAuth }, { user: { login: 'Alice' } });
    assert.equal(changed.statusCode, 422, changed.body);
    assert.equal(changed.body, '{"errors":{"login":["has already been taken"]}}');
  });

  it('lets an account keep its own name in another case', async () => {
    const res = await send('PUT', `/users/${t.alice.id}.json`, { authorization: t.adminAuth }, { user: { login: 'Alice', email: 'ALICE@example.com' } });
    assert.equal(res.statusCode, 204, res.body);
  });

  it('reports an older database\'s collision, and neither signs in with the shared name nor is looked up by it', async () => {
    // Written past the rules, as an older cmi allowed: a login and another account's email in another case.
    const bob = await create({ login: 'bob', email: 'bob@example.com' });
    assert.equal(bob.statusCode, 201, bob.body);
    const bobId = (JSON.parse(bob.body) as { user: { id: number } }).user.id;
    await t.database.db.updateTable('users').set({ login: 'Alice@Example.com' }).where('id', '=', t.alice.id).execute();
    await t.database.db.updateTable('users').set({ email: 'alice-own@example.com' }).where('id', '=', t.alice.id).execute();
    await t.database.db.updateTable('users').set({ email: 'alice@example.com' }).where('id', '=', bobId).execute();

    assert.deepEqual(await nameCollisions(t.database), [{ name: 'alice@example.com', ids: [t.alice.id, bobId] }]);
    const lines: string[] = [];
    await reportNameCollisions(t.database, (line) => lines.push(line));
    assert.deepEqual(lines, [
      `cmi: warning: "alice@example.com" is the login or email of users ${t.alice.id} and ${bobId} (in some case): it signs in to neither and the command line takes only their ids; give one of them another login or email (cmi users ...)`,
    ]);

    const service = usersService(usersRepository(t.database), () => new Date(), auditTrailOn(t.database, () => new Date(), 400));
    await assert.rejects(service.lookUp(OPERATOR, 'ALICE@example.com'), (error: Unprocessable) => {
      assert.deepEqual(error.messages, { base: [`"ALICE@example.com" names more than one user (ids ${t.alice.id}, ${bobId}): give the id`] });
      return true;
    });
    assert.equal((await service.lookUp(OPERATOR, 'BOB')).id, bobId);
    // The exact login names alice and bob's email names bob: two accounts, so neither password opens it.
    assertAccessDenied(await send('GET', '/version.json', { authorization: t.basic('Alice@Example.com', ALICE.password) }));
    assertAccessDenied(await send('GET', '/version.json', { authorization: t.basic('Alice@Example.com', 'a-password') }));
    assert.equal((await send('GET', '/version.json', { authorization: t.basic('alice-own@example.com', ALICE.password) })).statusCode, 200);
  });

  it('reports nothing on a database without collisions, and notes it so that later starts skip the scan', async () => {
    assert.deepEqual(await nameCollisions(t.database), []);
    const noted = () => t.database.db.selectFrom('settings').select('key').where('key', '=', 'users.name_collisions_none').execute();
    assert.deepEqual(await noted(), []);
    const lines: string[] = [];
    await reportNameCollisions(t.database, (line) => lines.push(line));
    assert.deepEqual([lines, (await noted()).length], [[], 1]);
    // Past the rules (what no cmi write makes any more), a collision after the note is not scanned for again.
    const bob = await create({ login: 'bob', email: 'bob@example.com' });
    await t.database.db.updateTable('users').set({ login: 'ALICE@example.com' }).where('id', '=', (JSON.parse(bob.body) as { user: { id: number } }).user.id).execute();
    await reportNameCollisions(t.database, (line) => lines.push(line));
    assert.deepEqual(lines, []);
  });

  it('scans again at every start while a collision remains (nothing noted)', async () => {
    const bob = await create({ login: 'bob', email: 'bob@example.com' });
    await t.database.db.updateTable('users').set({ login: 'ALICE@example.com' }).where('id', '=', (JSON.parse(bob.body) as { user: { id: number } }).user.id).execute();
    const lines: string[] = [];
    await reportNameCollisions(t.database, (line) => lines.push(line));
    await reportNameCollisions(t.database, (line) => lines.push(line));
    assert.equal(lines.length, 2);
    assert.deepEqual(await t.database.db.selectFrom('settings').select('key').where('key', '=', 'users.name_collisions_none').execute(), []);
  });
});

describe('credential changes through a session (finding 9)', () => {
  const BLANK = '{"errors":{"current_password":["can\'t be blank"]}}';
  const WRONG = '{"errors":{"current_password":["is incorrect"]}}';
  // A script of the server's own origin (finding 10): the custom header, no cross-site signs.
  const cookieOf = async (authorization: string) => withCookie(await login(t.app, authorization));

  it('needs current_password to change its own login, email or password with the cookie', async () => {
    const cookie = await cookieOf(t.aliceAuth);
    for (const change of [{ login: 'alice2' }, { email: 'alice2@example.com' }, { password: 'new-password' }]) {
      const bare = await send('PUT', `/users/${t.alice.id}.json`, cookie, { user: change });
      assert.equal(bare.statusCode, 422, bare.body);
      assert.equal(bare.body, BLANK);
      const wrong = await send('PUT', `/users/${t.alice.id}.json`, cookie, { user: { ...change, current_password: 'not-her-password' } });
      assert.equal(wrong.statusCode, 422, wrong.body);
      assert.equal(wrong.body, WRONG);
    }
    const named = await send('GET', `/users/${t.alice.id}.json`, { authorization: t.adminAuth });
    assert.equal((JSON.parse(named.body) as { user: { login: string } }).user.login, ALICE.login);
    const right = await send('PUT', `/users/${t.alice.id}.json`, cookie, { user: { email: 'alice2@example.com', current_password: ALICE.password } });
    assert.equal(right.statusCode, 204, right.body);
    // Other fields need nothing.
    const name = await send('PUT', `/users/${t.alice.id}.json`, cookie, { user: { first_name: 'Alicia' } });
    assert.equal(name.statusCode, 204, name.body);
  });

  it('needs current_password to make an API key with the cookie', async () => {
    const cookie = await cookieOf(t.aliceAuth);
    const bare = await send('POST', `/users/${t.alice.id}/make_new_api_key.json`, cookie);
    assert.equal(bare.statusCode, 422, bare.body);
    assert.equal(bare.body, BLANK);
    const wrong = await send('POST', `/users/${t.alice.id}/make_new_api_key.json`, cookie, { current_password: 'not-her-password' });
    assert.equal(wrong.statusCode, 422, wrong.body);
    assert.equal(wrong.body, WRONG);
    const right = await send('POST', `/users/${t.alice.id}/make_new_api_key.json`, cookie, { user: { current_password: ALICE.password } });
    assert.equal(right.statusCode, 200, right.body);
    assert.match((JSON.parse(right.body) as { user: { api_key: string } }).user.api_key, /^[0-9a-f]{64}$/);
  });

  it('asks an administrator with the cookie for its own password to change another user\'s credentials', async () => {
    const cookie = await cookieOf(t.adminAuth);
    const bare = await send('PUT', `/users/${t.alice.id}.json`, cookie, { user: { password: 'taken-over' } });
    assert.equal(bare.statusCode, 422, bare.body);
    assert.equal(bare.body, BLANK);
    const key = await send('POST', `/users/${t.alice.id}/make_new_api_key.json`, cookie);
    assert.equal(key.statusCode, 422, key.body);
    assert.equal(key.body, BLANK);
    const right = await send('PUT', `/users/${t.alice.id}.json`, cookie, { user: { password: 'taken-over', current_password: 'admin-password' } });
    assert.equal(right.statusCode, 204, right.body);
  });

  it('leaves Basic and API-key clients as they were', async () => {
    const email = await send('PUT', `/users/${t.alice.id}.json`, { authorization: t.aliceAuth }, { user: { login: 'alice2', email: 'alice2@example.com' } });
    assert.equal(email.statusCode, 204, email.body);
    const made = await send('POST', `/users/${t.alice.id}/make_new_api_key.json`, { authorization: t.basic('alice2', ALICE.password) });
    assert.equal(made.statusCode, 200, made.body);
    const key = (JSON.parse(made.body) as { user: { api_key: string } }).user.api_key;
    const again = await send('POST', `/users/${t.alice.id}/make_new_api_key.json`, { authorization: t.basic('alice2', key) }, {});
    assert.equal(again.statusCode, 200, again.body);
    const admin = await send('PUT', `/users/${t.alice.id}.json`, { authorization: t.adminAuth }, { user: { password: 'reset-by-admin' } });
    assert.equal(admin.statusCode, 204, admin.body);
  });
});

describe('cross-site requests with the session cookie (finding 10)', () => {
  const REFUSED = `{"errors":{"base":["${CROSS_SITE_REFUSAL}"]}}`;
  const suspendBob = async (headers: Record<string, string>) => {
    const bob = await t.addUsers(1);
    return send('POST', `/users/${(bob[0] as { id: number }).id}/suspend.json`, headers);
  };

  it('refuses a body-less change from another origin of the same site, or without X-Requested-With', async () => {
    const cookie = cookieOnly(await login(t.app, t.adminAuth));
    const refusals: Array<Record<string, string>> = [
      {}, // a form or an image: no custom header
      { origin: 'http://localhost:3001', 'x-requested-with': 'x' }, // another port of the same host
      { 'sec-fetch-site': 'same-site', 'x-requested-with': 'x' },
      { 'sec-fetch-site': 'cross-site', 'x-requested-with': 'x' },
      { origin: 'null', 'x-requested-with': 'x' },
      { origin: 'http://localhost:80' }, // its own origin, but no custom header
    ];
    for (const extra of refusals) {
      const res = await suspendBob({ ...cookie, ...extra });
      assert.equal(res.statusCode, 403, `${JSON.stringify(extra)}: ${res.body}`);
      assert.equal(res.body, REFUSED);
    }
    for (const url of [`/users/${t.alice.id}/make_new_api_key.json`, `/users/${t.alice.id}/activate.json`]) {
      const res = await send('POST', url, cookie);
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.body, REFUSED);
    }
    const logout = await send('DELETE', '/session.json', cookie);
    assert.equal(logout.statusCode, 403, logout.body);
    // Nothing was done: alice is active and the session still works.
    const alice = await send('GET', `/users/${t.alice.id}.json`, cookie);
    assert.equal((JSON.parse(alice.body) as { user: { status: string } }).user.status, 'active');
  });

  it('accepts a change with the cookie from its own origin with X-Requested-With, and reads as before', async () => {
    const cookie = cookieOnly(await login(t.app, t.adminAuth));
    assert.equal((await send('GET', '/users.json', cookie)).statusCode, 200);
    const accepted: Array<Record<string, string>> = [{ 'x-requested-with': 'XMLHttpRequest' }, { origin: 'http://localhost:80', 'sec-fetch-site': 'same-origin', 'x-requested-with': 'x' }];
    for (const extra of accepted) {
      const res = await suspendBob({ ...cookie, ...extra });
      assert.equal(res.statusCode, 200, res.body);
    }
  });

  it('leaves Basic and API-key clients alone, whatever their headers', async () => {
    const res = await suspendBob({ authorization: t.adminAuth, origin: 'http://localhost:3001', 'sec-fetch-site': 'cross-site' });
    assert.equal(res.statusCode, 200, res.body);
  });
});
