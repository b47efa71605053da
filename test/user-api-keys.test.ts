import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/app/app.js';
import { loadConfig } from '../src/config.js';
import { type Database, migrateTo, migrateToLatest, openDatabase } from '../src/db/database.js';
import { PERMISSIONS } from '../src/roles/permissions.js';
import { createTestApp, type TestApp } from './support/app.js';
import { testClock } from './support/clock.js';
import { type FreshDatabase, freshDatabase } from './support/database.js';
import { eventually } from './support/eventually.js';
import { forbiddenJson } from './support/error-reports.js';
import { callApi as call, assertAccessDenied, login, withCookie } from './support/http.js';

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const NOT_FOUND_JSON = '{"errors":{"base":["Resource not found"]}}';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The key a 201 of POST /users/:id/user_api_keys.json shows once. */
const keyOf = (res: LightMyRequestResponse) => (JSON.parse(res.body) as { user_api_key: { api_key: string } }).user_api_key.api_key;
const idOf = (res: LightMyRequestResponse) => (JSON.parse(res.body) as { user_api_key: { id: number } }).user_api_key.id;

interface KeyFields { id: number; user_id: number; description: string; default: boolean; created_at: string; last_used_at: string | null; api_key?: string }

const keyJson = (k: KeyFields) => JSON.stringify({ user_api_key: { id: k.id, user_id: k.user_id, description: k.description, default: k.default, created_at: k.created_at, last_used_at: k.last_used_at, ...(k.api_key === undefined ? {} : { api_key: k.api_key }) } });

const keyXml = (k: KeyFields, indent = '') => [
  `${indent}<user_api_key>`,
  `${indent}  <id type="integer">${k.id}</id>`,
  `${indent}  <user_id type="integer">${k.user_id}</user_id>`,
  `${indent}  <description>${k.description}</description>`,
  `${indent}  <default type="boolean">${k.default}</default>`,
  `${indent}  <created_at type="datetime">${k.created_at}</created_at>`,
  k.last_used_at === null ? `${indent}  <last_used_at nil="true"/>` : `${indent}  <last_used_at type="datetime">${k.last_used_at}</last_used_at>`,
  ...(k.api_key === undefined ? [] : [`${indent}  <api_key>${k.api_key}</api_key>`]),
  `${indent}</user_api_key>`,
].join('\n');

async function keyRows(database: Database, userId?: number) {
  let query = database.db.selectFrom('user_api_keys').selectAll().orderBy('id');
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  return (await query.execute()).map((row) => ({ ...row, id: Number(row.id), user_id: Number(row.user_id), is_default: Number(row.is_default) }));
}

const START = '2026-11-20T10:00:00+00:00';

describe('a user\'s API keys', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const create = (userId: number, description: string, auth = t.adminAuth) => call(t.app, 'POST', `/users/${userId}/user_api_keys.json`, { auth, body: { user_api_key: { description } } });
  const works = async (login: string, key: string, app = t.app) => (await call(app, 'GET', '/version.json', { auth: t.basic(login, key) })).statusCode === 200;

  it('creates a key: 201 with the key once, its Location, only its SHA-256 stored; lists it without the key, in JSON and XML', async () => {
    t.time.advance(60);
    const res = await create(2, 'deploy on ci');
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    const key = keyOf(res);
    assert.match(key, /^[0-9a-f]{64}$/);
    const id = idOf(res);
    assert.equal(res.headers.location, `/users/2/user_api_keys/${id}.json`);
    const fields = { id, user_id: 2, description: 'deploy on ci', default: false, created_at: '2026-11-20T10:01:00+00:00', last_used_at: null };
    assert.equal(res.body, keyJson({ ...fields, api_key: key }));
    const rows = await keyRows(t.database);
    assert.deepEqual(rows, [{ id, user_id: 2, description: 'deploy on ci', key_hash: sha256(key), is_default: 0, created_at: '2026-11-20T10:01:00.000Z', last_used_at: null }]);

    const list = await call(t.app, 'GET', '/users/2/user_api_keys.json', { auth: t.adminAuth });
    assert.equal(list.statusCode, 200);
    assert.equal(list.body, `[${keyJson(fields)}]`);
    assert.equal(list.headers['x-total'], '1');
    const xml = await call(t.app, 'GET', '/users/2/user_api_keys.xml', { auth: t.adminAuth });
    assert.equal(xml.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(xml.body, `${XML_DECLARATION}<user_api_keys type="array">\n${keyXml(fields, '  ')}\n</user_api_keys>\n`);
    const one = await call(t.app, 'GET', `/users/2/user_api_keys/${id}.xml`, { auth: t.adminAuth });
    assert.equal(one.body, `${XML_DECLARATION}${keyXml(fields)}\n`);
    for (const shown of [list.body, xml.body, one.body]) {
      assert.doesNotMatch(shown, new RegExp(key));
      assert.doesNotMatch(shown, new RegExp(sha256(key)));
    }

    const created = await call(t.app, 'POST', '/users/2/user_api_keys.xml', { auth: t.adminAuth, body: '<user_api_key><description>a &amp; b</description></user_api_key>', contentType: 'application/xml' });
    assert.equal(created.statusCode, 201, created.body);
    const xmlKey = /<api_key>([0-9a-f]{64})<\/api_key>/.exec(created.body)?.[1] as string;
    assert.equal(created.body, `${XML_DECLARATION}${keyXml({ id: id + 1, user_id: 2, description: 'a &amp; b', default: false, created_at: '2026-11-20T10:01:00+00:00', last_used_at: null, api_key: xmlKey })}\n`);
    assert.equal(created.headers.location, `/users/2/user_api_keys/${id + 1}.xml`);
  });

  it('each of several keys authenticates with the login or the email; the password still works; another user\'s login does not', async () => {
    const keys = [];
    for (const description of ['one', 'two', 'three']) keys.push(keyOf(await create(2, description)));
    for (const key of keys) {
      assert.ok(await works('alice', key));
      assert.ok(await works('alice@example.com', key));
      assert.equal(await works('admin', key), false);
    }
    assert.ok(await works('alice', 'alice-password'));
    assert.equal(new Set(keys).size, 3);
  });

  it('a revoked key is refused on the very next request, though it was verified (and cached) just before; the others go on', async () => {
    const first = await create(2, 'first');
    const second = keyOf(await create(2, 'second'));
    const key = keyOf(first);
    assert.ok(await works('alice', key));
    assert.ok(await works('alice', key));
    const res = await call(t.app, 'DELETE', `/users/2/user_api_keys/${idOf(first)}.json`, { auth: t.adminAuth });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assertAccessDenied(await call(t.app, 'GET', '/version.json', { auth: t.basic('alice', key) }));
    assert.ok(await works('alice', second));
    assert.deepEqual((await keyRows(t.database)).map((row) => row.description), ['second']);
    // Again: no such key.
    const again = await call(t.app, 'DELETE', `/users/2/user_api_keys/${idOf(first)}.json`, { auth: t.adminAuth });
    assert.equal(again.statusCode, 404);
    assert.equal(again.body, NOT_FOUND_JSON);
  });

  it('a key revoked through one process is refused by another on its very next request', async () => {
    const other = await t.secondProcess();
    try {
      const created = await create(2, 'elsewhere');
      const key = keyOf(created);
      assert.ok(await works('alice', key, other.app));
      assert.ok(await works('alice', key, other.app));
      assert.equal((await call(t.app, 'DELETE', `/users/2/user_api_keys/${idOf(created)}.json`, { auth: t.adminAuth })).statusCode, 204);
      // SQLite's data version is read at most once a millisecond (docs/architecture.md#how-cached-pages-stay-right).
      await new Promise((resolve) => setTimeout(resolve, 2));
      assertAccessDenied(await call(other.app, 'GET', '/version.json', { auth: t.basic('alice', key) }));
    } finally {
      await other.close();
    }
  });

  it('revoking a key ends the user\'s sessions (one may have been opened with it)', async () => {
    const created = await create(2, 'session maker');
    const token = await login(t.app, t.basic('alice', keyOf(created)));
    assert.equal((await call(t.app, 'GET', '/users/2.json', { headers: withCookie(token) })).statusCode, 200);
    assert.equal((await call(t.app, 'DELETE', `/users/2/user_api_keys/${idOf(created)}.json`, { auth: t.adminAuth })).statusCode, 204);
    assertAccessDenied(await call(t.app, 'GET', '/users/2.json', { headers: withCookie(token) }));
  });

  it('make_new_api_key replaces only the default key; the named keys keep working', async () => {
    const named = keyOf(await create(2, 'named'));
    t.time.advance(60);
    const made = await call(t.app, 'POST', '/users/2/make_new_api_key.json', { auth: t.adminAuth });
    assert.equal(made.statusCode, 200);
    const first = (JSON.parse(made.body) as { user: { api_key: string } }).user.api_key;
    t.time.advance(60);
    const again = await call(t.app, 'POST', '/users/2/make_new_api_key.json', { auth: t.adminAuth });
    const second = (JSON.parse(again.body) as { user: { api_key: string } }).user.api_key;
    assert.equal(await works('alice', first), false);
    assert.ok(await works('alice', second));
    assert.ok(await works('alice', named));
    const rows = await keyRows(t.database, 2);
    assert.deepEqual(rows.map((row) => [row.description, row.is_default, row.key_hash, row.created_at]), [
      ['named', 0, sha256(named), '2026-11-20T10:00:00.000Z'],
      ['default', 1, sha256(second), '2026-11-20T10:02:00.000Z'],
    ]);
    // users.api_key_hash follows the default key (for processes of the previous version).
    const user = await t.database.db.selectFrom('users').select('api_key_hash').where('id', '=', 2).executeTakeFirstOrThrow();
    assert.equal(user.api_key_hash, sha256(second));
    const list = await call(t.app, 'GET', '/users/2/user_api_keys.json', { auth: t.adminAuth });
    assert.equal(list.body, `[${keyJson({ id: rows[0]!.id, user_id: 2, description: 'named', default: false, created_at: START, last_used_at: null })},${keyJson({ id: rows[1]!.id, user_id: 2, description: 'default', default: true, created_at: '2026-11-20T10:02:00+00:00', last_used_at: null })}]`);
    // Revoking the default key clears it there too.
    assert.equal((await call(t.app, 'DELETE', `/users/2/user_api_keys/${rows[1]!.id}.json`, { auth: t.adminAuth })).statusCode, 204);
    assert.equal((await t.database.db.selectFrom('users').select('api_key_hash').where('id', '=', 2).executeTakeFirstOrThrow()).api_key_hash, null);
    assert.equal(await works('alice', second), false);
  });

  it('removing a user removes its keys', async () => {
    const [bob] = await t.addUsers(1);
    assert.equal((await create(bob!.id, 'bob\'s')).statusCode, 201);
    for (let i = 0; i < 2; i++) assert.equal((await call(t.app, 'DELETE', `/users/${bob!.id}.json`, { auth: t.adminAuth })).statusCode, 204);
    assert.deepEqual(await keyRows(t.database, bob!.id), []);
  });

  it('OnApp\'s generate answers the key alone, {"api_key": ...} and <hash>, described after its maker', async () => {
    const json = await call(t.app, 'POST', '/users/2/user_api_keys/generate.json', { auth: t.adminAuth });
    assert.equal(json.statusCode, 201, json.body);
    const key = (JSON.parse(json.body) as { api_key: string }).api_key;
    assert.equal(json.body, `{"api_key":"${key}"}`);
    const xml = await call(t.app, 'POST', '/users/2/user_api_keys/generate.xml', { auth: t.aliceAuth, body: '' });
    assert.equal(xml.statusCode, 201, xml.body);
    const xmlKey = /<api_key>([0-9a-f]{64})<\/api_key>/.exec(xml.body)?.[1] as string;
    assert.equal(xml.body, `${XML_DECLARATION}<hash>\n  <api_key>${xmlKey}</api_key>\n</hash>\n`);
    const rows = await keyRows(t.database, 2);
    assert.deepEqual(rows.map((row) => row.description), ['Generated through API by admin', 'Generated through API by alice']);
    assert.equal(json.headers.location, `/users/2/user_api_keys/${rows[0]!.id}.json`);
    assert.ok(await works('alice', key));
    assert.ok(await works('alice', xmlKey));
  });

  it('a user manages its own keys, never another\'s; unknown users and keys are 404', async () => {
    const own = await create(2, 'mine', t.aliceAuth);
    assert.equal(own.statusCode, 201);
    const adminKey = await create(1, 'admin key');
    for (const [method, url] of [
      ['GET', '/users/1/user_api_keys.json'],
      ['POST', '/users/1/user_api_keys.json'],
      ['POST', '/users/1/user_api_keys/generate.json'],
      ['GET', `/users/1/user_api_keys/${idOf(adminKey)}.json`],
      ['DELETE', `/users/1/user_api_keys/${idOf(adminKey)}.json`],
    ] as const) {
      const res = await call(t.app, method, url, { auth: t.aliceAuth, body: { description: 'x' } });
      assert.equal(res.statusCode, 403, `${method} ${url}`);
      assert.equal(res.body, forbiddenJson('users.api_key'));
    }
    // Another user's key under one's own path is no key of one's own.
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await call(t.app, method, `/users/2/user_api_keys/${idOf(adminKey)}.json`, { auth: t.aliceAuth });
      assert.equal(res.statusCode, 404, method);
      assert.equal(res.body, NOT_FOUND_JSON);
    }
    for (const url of ['/users/99/user_api_keys.json', '/users/2/user_api_keys/999.json', '/users/2/user_api_keys/x.json']) {
      const res = await call(t.app, 'GET', url, { auth: t.adminAuth });
      assert.equal(res.statusCode, 404, url);
    }
    assert.equal((await create(99, 'nobody')).statusCode, 404);
    assert.equal((await keyRows(t.database)).length, 2);
  });

  it('refuses a missing or too long description, and a 101st key', async () => {
    const blank = await call(t.app, 'POST', '/users/2/user_api_keys.json', { auth: t.adminAuth, body: {} });
    assert.equal(blank.statusCode, 422);
    assert.equal(blank.body, '{"errors":{"description":["can\'t be blank"]}}');
    const long = await create(2, 'x'.repeat(256));
    assert.equal(long.statusCode, 422);
    assert.equal(long.body, '{"errors":{"description":["is too long (maximum is 255 characters)"]}}');
    const longXml = await call(t.app, 'POST', '/users/2/user_api_keys.xml', { auth: t.adminAuth, body: `<user_api_key><description>${'x'.repeat(256)}</description></user_api_key>`, contentType: 'application/xml' });
    assert.equal(longXml.body, `${XML_DECLARATION}<errors>\n  <error>Description is too long (maximum is 255 characters)</error>\n</errors>\n`);
    await t.database.db.insertInto('user_api_keys')
      .values(Array.from({ length: 100 }, (_, i) => ({ user_id: 2, description: `k${i}`, key_hash: sha256(`k${i}`), created_at: '2026-11-20T10:00:00.000Z' }))).execute();
    const over = await create(2, 'one too many');
    assert.equal(over.statusCode, 422);
    assert.equal(over.body, '{"errors":{"base":["A user has at most 100 API keys: revoke one first"]}}');
    assert.equal((await keyRows(t.database, 2)).length, 100);
    // make_new_api_key still makes the default key.
    assert.equal((await call(t.app, 'POST', '/users/2/make_new_api_key.json', { auth: t.adminAuth })).statusCode, 200);
    const page = await call(t.app, 'GET', '/users/2/user_api_keys.json?page=5&per_page=25', { auth: t.adminAuth });
    assert.equal(page.headers['x-total'], '101');
    assert.equal((JSON.parse(page.body) as unknown[]).length, 1);
  });

  it('through the session cookie, a new key needs the current password', async () => {
    const token = await login(t.app, t.aliceAuth);
    const without = await call(t.app, 'POST', '/users/2/user_api_keys.json', { headers: withCookie(token), body: { description: 'web' } });
    assert.equal(without.statusCode, 422);
    assert.equal(without.body, '{"errors":{"current_password":["can\'t be blank"]}}');
    const wrong = await call(t.app, 'POST', '/users/2/user_api_keys.json', { headers: withCookie(token), body: { description: 'web', current_password: 'nope' } });
    assert.equal(wrong.body, '{"errors":{"current_password":["is incorrect"]}}');
    const right = await call(t.app, 'POST', '/users/2/user_api_keys.json', { headers: withCookie(token), body: { description: 'web', current_password: 'alice-password' } });
    assert.equal(right.statusCode, 201, right.body);
  });

  it('last_used_at: written apart from the request, at most once a minute per key', async () => {
    const created = await create(2, 'used');
    const key = keyOf(created);
    t.time.advance(10);
    assert.ok(await works('alice', key));
    const lastUsed = async () => (await keyRows(t.database, 2))[0]?.last_used_at;
    await eventually(async () => assert.equal(await lastUsed(), '2026-11-20T10:00:10.000Z', 'the first use is written'));
    // Answered from the cache, within the minute: noted nowhere.
    t.time.advance(30);
    assert.ok(await works('alice', key));
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    assert.equal(await lastUsed(), '2026-11-20T10:00:10.000Z');
    t.time.advance(31);
    assert.ok(await works('alice', key));
    await eventually(async () => assert.equal(await lastUsed(), '2026-11-20T10:01:11.000Z', 'a use a minute later is written'));
    const list = await call(t.app, 'GET', '/users/2/user_api_keys.json', { auth: t.adminAuth });
    assert.equal(list.body, `[${keyJson({ id: idOf(created), user_id: 2, description: 'used', default: false, created_at: START, last_used_at: '2026-11-20T10:01:11+00:00' })}]`);
  });
});

/** A role of the test's own holding `permissions`; its id. */
async function addRole(database: Database, identifier: string, permissions: string[]): Promise<number> {
  const { id } = await database.db.insertInto('roles').values({ label: identifier, identifier, created_at: START, updated_at: START }).returning('id').executeTakeFirstOrThrow();
  const ids = PERMISSIONS.filter(([, name]) => permissions.includes(name)).map(([permissionId]) => permissionId);
  await database.db.insertInto('role_permissions').values(ids.map((permission_id) => ({ role_id: Number(id), permission_id }))).execute();
  return Number(id);
}

describe('users.api_key never makes a key stronger than its maker (docs/security.md#api-keys)', () => {
  let t: TestApp;
  let makerAuth: string;
  let makerId: number;
  let memberId: number;
  const refusal = (userId: number, lacking: string[]) =>
    JSON.stringify({ errors: { base: [`You are not authorized to perform this action (needs ${lacking.join(', ')}: a key for user ${userId} acts with its permissions)`] } });
  before(async () => {
    t = await createTestApp();
    const [maker, member] = await t.addUsers(2);
    makerId = maker!.id;
    memberId = member!.id;
    // users.read and users.api_key stand for alice's users.read.own and users.api_key.own; users.update.own it holds as such.
    const makers = await addRole(t.database, 'key_makers', ['users.read', 'users.api_key', 'users.update.own']);
    await t.database.db.deleteFrom('user_roles').where('user_id', '=', makerId).execute();
    await t.database.db.insertInto('user_roles').values({ user_id: makerId, role_id: makers }).execute();
    makerAuth = t.basic(maker!.login, 'shared-password');
    // The member holds the role user itself; its group adds error reading.
    const readers = await addRole(t.database, 'error_readers', ['infrastructure_errors.read']);
    const group = await call(t.app, 'POST', '/user_groups.json', { auth: t.adminAuth, body: { user_group: { label: 'Readers', role_ids: [readers] } } });
    assert.equal(group.statusCode, 201, group.body);
    const groupId = (JSON.parse(group.body) as { user_group: { id: number } }).user_group.id;
    await t.database.db.updateTable('users').set({ user_group_id: groupId }).where('id', '=', memberId).execute();
  });
  after(() => t.close());

  const state = async () => ({
    keys: await keyRows(t.database),
    hashes: await t.database.db.selectFrom('users').select(['id', 'api_key_hash']).orderBy('id').execute(),
    audit: (await t.database.db.selectFrom('audit_events').select('id').execute()).length,
  });

  it('refuses a key for an administrator, by each way of making one: 403 naming what the maker lacks, nothing made', async () => {
    const lacking = PERMISSIONS.map(([, name]) => name).filter((name) => !['users.read', 'users.read.own', 'users.api_key', 'users.api_key.own', 'users.update.own'].includes(name)).sort();
    const before = await state();
    for (const url of ['/users/1/user_api_keys.json', '/users/1/user_api_keys/generate.json', '/users/1/make_new_api_key.json']) {
      const res = await call(t.app, 'POST', url, { auth: makerAuth, body: { user_api_key: { description: 'take over' } } });
      assert.deepEqual([res.statusCode, res.body], [403, refusal(1, lacking)], url);
    }
    const xml = await call(t.app, 'POST', '/users/1/make_new_api_key.xml', { auth: makerAuth });
    assert.deepEqual([xml.statusCode, xml.body], [403, `${XML_DECLARATION}<errors>\n  <error>${(JSON.parse(refusal(1, lacking)) as { errors: { base: string[] } }).errors.base[0]}</error>\n</errors>\n`]);
    assert.deepEqual(await state(), before);
  });

  it('counts the permissions of the user\'s group too', async () => {
    const before = await state();
    const res = await call(t.app, 'POST', `/users/${memberId}/user_api_keys.json`, { auth: makerAuth, body: { description: 'x' } });
    assert.deepEqual([res.statusCode, res.body], [403, refusal(memberId, ['infrastructure_errors.read'])]);
    assert.deepEqual(await state(), before);
  });

  it('makes keys for a user holding nothing the maker lacks, and for the maker itself', async () => {
    for (const userId of [t.alice.id, makerId]) {
      const res = await call(t.app, 'POST', `/users/${userId}/user_api_keys.json`, { auth: makerAuth, body: { description: 'support' } });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal((await call(t.app, 'POST', `/users/${userId}/make_new_api_key.json`, { auth: makerAuth })).statusCode, 200);
    }
  });
});

describe('the credentials signal of user_api_keys (migration 021)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('another process hears of a new, changed or revoked key, not of a key\'s last use', async () => {
    const other = openDatabase(t.config);
    try {
      /** The credentials version as the other process sees it once it heard of every change committed. */
      const heard = async () => {
        // SQLite reads PRAGMA data_version at most once a millisecond.
        await new Promise((resolve) => setTimeout(resolve, 2));
        await other.dataVersions.credentialsHeard();
        return other.dataVersions.credentials();
      };
      await eventually(async () => assert.notEqual(await heard(), undefined, 'the signal is there'));
      let version = await heard();
      const moved = async (what: string) => {
        const now = await heard();
        assert.notEqual(now, version, what);
        version = now;
      };
      const { id } = await t.database.db.insertInto('user_api_keys').values({ user_id: 2, description: 'k', key_hash: sha256('k'), created_at: '2026-11-20T10:00:00.000Z' }).returning('id').executeTakeFirstOrThrow();
      await moved('a new key');
      await t.database.db.updateTable('user_api_keys').set({ last_used_at: '2026-11-20T10:05:00.000Z' }).where('id', '=', id).execute();
      assert.equal(await heard(), version, 'a last use changes no credential');
      await t.database.db.updateTable('user_api_keys').set({ key_hash: sha256('other') }).where('id', '=', id).execute();
      await moved('a changed hash');
      await t.database.db.deleteFrom('user_api_keys').where('id', '=', id).execute();
      await moved('a revoked key');
    } finally {
      await other.close();
    }
  });
});

describe('migration 021: the user\'s one key becomes its default key', () => {
  let fresh: FreshDatabase;
  let database: Database;
  before(async () => {
    fresh = await freshDatabase();
    database = openDatabase(loadConfig({ DATABASE_URL: fresh.url, LOG_LEVEL: 'silent' }));
  });
  after(async () => {
    await database.close();
    await fresh.drop();
  });

  it('carries each user\'s key over, described default, and it keeps working', async () => {
    await migrateTo(database, '019_role_credential_changes');
    const AT = '2026-11-20T09:00:00.000Z';
    const oldKey = 'a'.repeat(64);
    const { hashPassword } = await import('../src/users/passwords.js');
    const passwordHash = await hashPassword('old-password');
    const user = (login: string, apiKeyHash: string | null) => ({ login, email: `${login}@example.com`, password_hash: passwordHash, first_name: '', last_name: '', status: 'active', role: 'user', api_key_hash: apiKeyHash, created_at: AT, updated_at: AT });
    await database.db.insertInto('users').values([user('keeper', sha256(oldKey)), user('keyless', null)]).execute();
    const ids = await database.db.selectFrom('users').select('id').orderBy('id').execute();
    await database.db.insertInto('user_roles').values(ids.map((row) => ({ user_id: Number(row.id), role_id: 2 }))).execute();
    await migrateToLatest(database);

    const rows = await keyRows(database);
    assert.deepEqual(rows.map((row) => [row.user_id, row.description, row.key_hash, row.is_default, row.last_used_at]), [[Number(ids[0]!.id), 'default', sha256(oldKey), 1, null]]);
    const time = testClock();
    const app = await buildApp({ config: loadConfig({ DATABASE_URL: fresh.url, LOG_LEVEL: 'silent' }), database, clock: time.clock, logger: false });
    try {
      const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
      assert.equal((await call(app, 'GET', '/version.json', { auth: basic('keeper', oldKey) })).statusCode, 200);
      assert.equal((await call(app, 'GET', '/version.json', { auth: basic('keyless', oldKey) })).statusCode, 401);
      assert.equal((await call(app, 'GET', '/version.json', { auth: basic('keyless', 'old-password') })).statusCode, 200);
    } finally {
      await app.close();
    }
  });
});
