import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../src/config.js';
import { type Database, migrateTo, migrateToLatest, openDatabase } from '../src/db/database.js';
import { PERMISSIONS } from '../src/roles/permissions.js';
import { createTestApp, type TestApp } from './support/app.js';
import { type FreshDatabase, freshDatabase, onPostgres } from './support/database.js';
import { ERRORS, FORBIDDEN_JSON } from './support/error-reports.js';

const AT = '2026-11-20T10:00:00.000Z';
const LAST_ADMIN_JSON = '{"errors":{"base":["The last active administrator cannot be deleted, suspended or made a user"]}}';
const ADMIN_ROLE = { role: { id: 1, label: 'Administrator', identifier: 'admin' } };
const USER_ROLE = { role: { id: 2, label: 'User', identifier: 'user' } };

function call(t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, auth: string, body?: unknown, contentType = 'application/json'): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: auth };
  if (body !== undefined) headers['content-type'] = contentType;
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

/** What the database holds: each user's role ids, and its `role` column. */
async function rolesInDatabase(database: Database): Promise<Array<[string, string, number[]]>> {
  const users = await database.db.selectFrom('users').select(['id', 'login', 'role']).orderBy('id').execute();
  const links = await database.db.selectFrom('user_roles').select(['user_id', 'role_id']).orderBy('user_id').orderBy('role_id').execute();
  return users.map((user) => [user.login, user.role, links.filter((link) => Number(link.user_id) === Number(user.id)).map((link) => Number(link.role_id))]);
}

/** A role of the test's own, holding `permissions` (ids come from the catalogue). */
async function addRole(database: Database, identifier: string, permissions: string[]): Promise<number> {
  const { id } = await database.db.insertInto('roles').values({ label: identifier, identifier, created_at: AT, updated_at: AT }).returning('id').executeTakeFirstOrThrow();
  const ids = PERMISSIONS.filter(([, name]) => permissions.includes(name)).map(([permissionId]) => permissionId);
  if (ids.length > 0) await database.db.insertInto('role_permissions').values(ids.map((permission_id) => ({ role_id: Number(id), permission_id }))).execute();
  return Number(id);
}

describe('migration 015: roles and permissions', () => {
  let fresh: FreshDatabase;
  let database: Database;
  beforeEach(async () => {
    fresh = await freshDatabase();
    database = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
  });
  afterEach(async () => {
    await database.close();
    await fresh.drop();
  });

  it('gives every existing user the role it had, and seeds the catalogue and the two system roles', async () => {
    await migrateTo(database, '014_wide_counters');
    const user = (login: string, role: string, status = 'active') => ({ login, email: `${login}@example.com`, password_hash: 'x', first_name: '', last_name: '', status, role, created_at: AT, updated_at: AT });
    await database.db.insertInto('users').values([user('root', 'admin'), user('ann', 'user'), user('gone', 'admin', 'suspended'), user('bea', 'user', 'deleted')]).execute();
    await migrateToLatest(database);

    assert.deepEqual(await rolesInDatabase(database), [['root', 'admin', [1]], ['ann', 'user', [2]], ['gone', 'admin', [1]], ['bea', 'user', [2]]]);
    const permissions = await database.db.selectFrom('permissions').select(['id', 'identifier', 'label']).orderBy('id').execute();
    assert.deepEqual(permissions.map((p) => [Number(p.id), p.identifier, p.label]), PERMISSIONS.map((p) => [...p]));
    const roles = await database.db.selectFrom('roles').select(['id', 'label', 'identifier', 'system']).orderBy('id').execute();
    assert.deepEqual(roles.map((r) => [Number(r.id), r.label, r.identifier, Number(r.system)]), [[1, 'Administrator', 'admin', 1], [2, 'User', 'user', 1]]);
    const held = async (roleId: number) =>
      (await database.db.selectFrom('role_permissions').innerJoin('permissions', 'permissions.id', 'role_permissions.permission_id')
        .select('permissions.identifier').where('role_id', '=', roleId).orderBy('permissions.id').execute()).map((row) => row.identifier);
    assert.deepEqual(await held(1), PERMISSIONS.map(([, identifier]) => identifier));
    assert.deepEqual(await held(2), ['users.read.own', 'users.update.own', 'users.api_key.own']);
    // The next role added gets id 3 (PostgreSQL's identity restarted past the seeded ids).
    assert.equal(await addRole(database, 'readers', []), 3);
  });

  it('keeps users.role as the roles say: admin while role 1 is held, user otherwise', async () => {
    await migrateToLatest(database);
    const { id } = await database.db.insertInto('users')
      .values({ login: 'kim', email: 'kim@example.com', password_hash: 'x', first_name: '', last_name: '', status: 'active', role: 'user', created_at: AT, updated_at: AT })
      .returning('id').executeTakeFirstOrThrow();
    await database.db.insertInto('user_roles').values({ user_id: Number(id), role_id: 1 }).execute();
    assert.deepEqual(await rolesInDatabase(database), [['kim', 'admin', [1]]]);
    await database.db.insertInto('user_roles').values({ user_id: Number(id), role_id: 2 }).execute();
    await database.db.deleteFrom('user_roles').where('role_id', '=', 1).execute();
    assert.deepEqual(await rolesInDatabase(database), [['kim', 'user', [2]]]);
  });
});

describe('authorisation by permission', () => {
  let t: TestApp;
  let readerAuth: string;
  let errorId: number;
  before(async () => {
    t = await createTestApp();
    const readers = await addRole(t.database, 'error_readers', ['infrastructure_errors.read']);
    const [reader] = await t.addUsers(1);
    await t.database.db.deleteFrom('user_roles').where('user_id', '=', reader!.id).execute();
    await t.database.db.insertInto('user_roles').values({ user_id: reader!.id, role_id: readers }).execute();
    readerAuth = t.basic(reader!.login, 'shared-password');
    const reported = await call(t, 'POST', `${ERRORS}.json`, t.adminAuth, { error_class: 'StorageTimeout', message: 'timeout' });
    assert.equal(reported.statusCode, 201);
    errorId = reported.json<{ infrastructure_error: { id: number } }>().infrastructure_error.id;
  });
  after(() => t.close());

  it('a role with infrastructure_errors.read reads errors, and nothing else', async () => {
    const list = await call(t, 'GET', `${ERRORS}.json`, readerAuth);
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json<Array<{ infrastructure_error: { id: number } }>>().map((e) => e.infrastructure_error.id), [errorId]);
    assert.equal((await call(t, 'GET', `${ERRORS}/${errorId}.json`, readerAuth)).statusCode, 200);
    for (const [method, url, body] of [
      ['DELETE', `${ERRORS}/${errorId}.json`, undefined],
      ['POST', `${ERRORS}.json`, { error_class: 'X' }],
      ['POST', `${ERRORS}/${errorId}/report.json`, undefined],
      ['GET', '/users.json', undefined],
      ['GET', `/users/${t.admin.id}.json`, undefined],
      ['POST', '/users.json', { user: { login: 'newbie', email: 'newbie@example.com', password: 'a-password' } }],
    ] as const) {
      const res = await call(t, method, url, readerAuth, body);
      assert.equal(res.statusCode, 403, `${method} ${url}`);
      assert.equal(res.body, FORBIDDEN_JSON);
    }
    // Without users.read.own it does not even see itself.
    assert.equal((await call(t, 'GET', `/users/${t.admin.id + 2}.json`, readerAuth)).statusCode, 403);
    assert.equal((await call(t, 'GET', `${ERRORS}.json`, t.aliceAuth)).statusCode, 403);
  });
});

describe('users with role_ids', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const rolesOf = async (id: number) => (await call(t, 'GET', `/users/${id}.json`, t.adminAuth)).json<{ user: { roles: unknown[] } }>().user.roles;

  it('creates with role_ids as numbers or strings; without them, the user role', async () => {
    const made = await call(t, 'POST', '/users.json', t.adminAuth, { user: { login: 'boss', email: 'boss@example.com', password: 'a-password', role_ids: ['1'] } });
    assert.equal(made.statusCode, 201);
    const boss = made.json<{ user: { id: number; roles: unknown[] } }>().user;
    assert.deepEqual(boss.roles, [ADMIN_ROLE]);
    const plain = await call(t, 'POST', '/users.json', t.adminAuth, { user: { login: 'plain', email: 'plain@example.com', password: 'a-password' } });
    assert.deepEqual(plain.json<{ user: { roles: unknown[] } }>().user.roles, [USER_ROLE]);
    const both = await call(t, 'POST', '/users.json', t.adminAuth, { user: { login: 'both', email: 'both@example.com', password: 'a-password', role_ids: [2, 1, 1] } });
    assert.deepEqual(both.json<{ user: { roles: unknown[] } }>().user.roles, [ADMIN_ROLE, USER_ROLE]);
    assert.deepEqual((await rolesInDatabase(t.database)).slice(2), [['boss', 'admin', [1]], ['plain', 'user', [2]], ['both', 'admin', [1, 2]]]);
  });

  it('takes role_ids in XML', async () => {
    const xml = '<user><login>xml</login><email>xml@example.com</email><password>a-password</password><role_ids type="array"><item>1</item><item>2</item></role_ids></user>';
    const made = await call(t, 'POST', '/users.json', t.adminAuth, xml, 'application/xml');
    assert.equal(made.statusCode, 201);
    assert.deepEqual(made.json<{ user: { roles: unknown[] } }>().user.roles, [ADMIN_ROLE, USER_ROLE]);
    const one = '<user><role_ids type="array"><item>2</item></role_ids></user>';
    const id = made.json<{ user: { id: number } }>().user.id;
    assert.equal((await call(t, 'PUT', `/users/${id}.xml`, t.adminAuth, one, 'application/xml')).statusCode, 204);
    assert.deepEqual(await rolesOf(id), [USER_ROLE]);
  });

  it('refuses an unknown role, an empty list or a list of another type with 422, and creates nothing', async () => {
    const before = await rolesInDatabase(t.database);
    for (const [roleIds, message] of [
      [[1, 99, 98], 'names no role: 99, 98'],
      [[], 'must name at least one role'],
      ['1', 'must be a list of ids'],
      [[0], 'must be a list of ids'],
      [[1.5], 'must be a list of ids'],
    ] as const) {
      const res = await call(t, 'POST', '/users.json', t.adminAuth, { user: { login: 'nope', email: 'nope@example.com', password: 'a-password', role_ids: roleIds } });
      assert.equal(res.statusCode, 422, JSON.stringify(roleIds));
      assert.equal(res.body, JSON.stringify({ errors: { role_ids: [message] } }));
    }
    const edit = await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { first_name: 'Changed', role_ids: [7] } });
    assert.equal(edit.statusCode, 422);
    assert.deepEqual(await rolesInDatabase(t.database), before);
    assert.equal((await t.database.db.selectFrom('users').select('first_name').where('id', '=', t.alice.id).executeTakeFirstOrThrow()).first_name, 'Alice');
  });

  it('lets only a holder of users.update change roles, but takes an unchanged list from anyone (wrapped or not)', async () => {
    for (const body of [{ user: { first_name: 'Al', role_ids: ['2'] } }, { first_name: 'Al', role_ids: [2] }]) {
      assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.aliceAuth, body)).statusCode, 204);
    }
    const raise = await call(t, 'PUT', `/users/${t.alice.id}.json`, t.aliceAuth, { user: { role_ids: [1] } });
    assert.equal(raise.statusCode, 403);
    assert.equal(raise.body, FORBIDDEN_JSON);
    // cmi's own `role` stays an administrator's field, changed or not.
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.aliceAuth, { user: { role: 'user' } })).statusCode, 403);
    assert.deepEqual(await rolesOf(t.alice.id), [USER_ROLE]);
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { role_ids: [1] })).statusCode, 204);
    assert.deepEqual(await rolesOf(t.alice.id), [ADMIN_ROLE]);
  });

  it('role swaps the system role and keeps the others', async () => {
    const readers = await addRole(t.database, 'error_readers', ['infrastructure_errors.read']);
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { role_ids: [2, readers] } })).statusCode, 204);
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { role: 'admin' } })).statusCode, 204);
    assert.deepEqual((await rolesInDatabase(t.database))[1], ['alice', 'admin', [1, readers]]);
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { role: 'user' } })).statusCode, 204);
    assert.deepEqual((await rolesInDatabase(t.database))[1], ['alice', 'user', [2, readers]]);
  });

  it('refuses to take admin from the last active administrator', async () => {
    for (const body of [{ user: { role_ids: [2] } }, { role_ids: ['2'] }, { user: { role: 'user' } }]) {
      const res = await call(t, 'PUT', `/users/${t.admin.id}.json`, t.adminAuth, body);
      assert.equal(res.statusCode, 422);
      assert.equal(res.body, LAST_ADMIN_JSON);
    }
    assert.deepEqual((await rolesInDatabase(t.database))[0], ['admin', 'admin', [1]]);
    // With another active administrator, it may.
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { role_ids: [1] })).statusCode, 204);
    assert.equal((await call(t, 'PUT', `/users/${t.admin.id}.json`, t.adminAuth, { role_ids: [2] })).statusCode, 204);
    assert.deepEqual((await rolesInDatabase(t.database)).slice(0, 2), [['admin', 'user', [2]], ['alice', 'admin', [1]]]);
  });

  it('two administrators taking admin from each other at once: exactly one succeeds', async () => {
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { role_ids: [1] })).statusCode, 204);
    const other = await t.secondProcess();
    try {
      const answers = await Promise.all([
        call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { role_ids: [2] }),
        other.app.inject({ method: 'PUT', url: `/users/${t.admin.id}.json`, headers: { authorization: t.aliceAuth, 'content-type': 'application/json' }, payload: JSON.stringify({ role_ids: [2] }) }),
      ]);
      assert.deepEqual(answers.map((res) => res.statusCode).sort(), [204, 422]);
      const admins = (await rolesInDatabase(t.database)).filter(([, role]) => role === 'admin');
      assert.equal(admins.length, 1);
    } finally {
      await other.close();
    }
  });

  it('a suspension and taking admin at once leave an active administrator', { skip: !onPostgres && 'SQLite runs one writer at a time' }, async () => {
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { role_ids: [1] })).statusCode, 204);
    const other = await t.secondProcess();
    try {
      const answers = await Promise.all([
        call(t, 'POST', `/users/${t.alice.id}/suspend.json`, t.adminAuth),
        other.app.inject({ method: 'PUT', url: `/users/${t.admin.id}.json`, headers: { authorization: t.aliceAuth, 'content-type': 'application/json' }, payload: JSON.stringify({ role_ids: [2] }) }),
      ]);
      assert.deepEqual(answers.map((res) => res.statusCode).sort(), [200, 422]);
      const active = await t.database.db.selectFrom('users').select('id').where('role', '=', 'admin').where('status', '=', 'active').execute();
      assert.equal(active.length, 1);
    } finally {
      await other.close();
    }
  });
});
