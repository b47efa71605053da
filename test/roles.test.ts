import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { type Database, migrateTo, migrateToLatest, openDatabase } from '../src/db/database.js';
import { PERMISSIONS } from '../src/roles/permissions.js';
import { createTestApp, type TestApp } from './support/app.js';
import { type FreshDatabase, freshDatabase, onPostgres } from './support/database.js';
import { ERRORS, forbiddenJson, forbiddenXml } from './support/error-reports.js';
import { type RoleJson, roleJson } from './support/roles.js';

const AT = '2026-11-20T10:00:00.000Z';
const LAST_ADMIN_JSON = '{"errors":{"base":["The last active administrator cannot be deleted, suspended or made a user"]}}';

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

describe('migration 016: roles and permissions', () => {
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
    for (const [method, url, body, needs] of [
      ['DELETE', `${ERRORS}/${errorId}.json`, undefined, ['infrastructure_errors.delete']],
      ['POST', `${ERRORS}.json`, { error_class: 'X' }, ['infrastructure_errors.create']],
      ['POST', `${ERRORS}/${errorId}/report.json`, undefined, ['infrastructure_errors.report']],
      ['GET', '/users.json', undefined, ['users.read', 'users.read.own']],
      ['GET', `/users/${t.admin.id}.json`, undefined, ['users.read']],
      ['POST', '/users.json', { user: { login: 'newbie', email: 'newbie@example.com', password: 'a-password' } }, ['users.create']],
    ] as const) {
      const res = await call(t, method, url, readerAuth, body);
      assert.equal(res.statusCode, 403, `${method} ${url}`);
      assert.equal(res.body, forbiddenJson(...needs));
    }
    // Without users.read.own it does not even see itself.
    assert.equal((await call(t, 'GET', `/users/${t.admin.id + 2}.json`, readerAuth)).statusCode, 403);
    assert.equal((await call(t, 'GET', `${ERRORS}.json`, t.aliceAuth)).statusCode, 403);
  });
});

describe('users with role_ids', () => {
  let t: TestApp;
  /** The system roles as a user record shows them, with their permissions. */
  let ADMIN_ROLE: { role: RoleJson };
  let USER_ROLE: { role: RoleJson };
  beforeEach(async () => {
    t = await createTestApp();
    ADMIN_ROLE = { role: t.systemRoles.admin };
    USER_ROLE = { role: t.systemRoles.user };
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
    assert.equal(raise.body, forbiddenJson('users.update'));
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
    // The record shows every role held, with its permissions.
    assert.equal(JSON.stringify(await rolesOf(t.alice.id)), JSON.stringify([ADMIN_ROLE, { role: await roleJson(t.database, readers) }]));
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
      // The refused one is 422 (it would leave no administrator) when both were authorised before either
      // committed, or 403 when it was authorised after its sender's admin was already taken.
      const [first, second] = answers.map((res) => res.statusCode).sort();
      assert.ok(first === 204 && (second === 403 || second === 422), `answers ${answers.map((res) => res.statusCode).join(", ")}`);
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

describe('users.create without users.update (docs/security.md#authorisation-by-permission)', () => {
  let t: TestApp;
  let creatorAuth: string;
  let readers: number;
  let admins: number;
  let bucket: number;
  before(async () => {
    t = await createTestApp();
    const creators = await addRole(t.database, 'creators', ['users.create', 'users.read.own']);
    readers = await addRole(t.database, 'error_readers', ['infrastructure_errors.read']);
    const [creator] = await t.addUsers(1);
    await t.database.db.deleteFrom('user_roles').where('user_id', '=', creator!.id).execute();
    await t.database.db.insertInto('user_roles').values({ user_id: creator!.id, role_id: creators }).execute();
    creatorAuth = t.basic(creator!.login, 'shared-password');
    const group = await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Admins', role_ids: [1] } });
    admins = group.json<{ user_group: { id: number } }>().user_group.id;
    bucket = (await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label: 'Gold' } })).json<{ bucket: { id: number } }>().bucket.id;
  });
  after(() => t.close());

  const newUser = (login: string, extra: Record<string, unknown> = {}) => ({ user: { login, email: `${login}@example.com`, password: 'a-password', ...extra } });
  const state = async () => ({
    users: await t.database.db.selectFrom('users').select(['id', 'login', 'bucket_id', 'user_group_id']).orderBy('id').execute(),
    roles: await rolesInDatabase(t.database),
    audit: (await t.database.db.selectFrom('audit_events').select('id').execute()).length,
  });

  it('refuses a role but the default, role admin, a group or a bucket: 403 naming users.update, nothing created', async () => {
    const before = await state();
    for (const extra of [
      { role_ids: [1] }, { role_ids: ['1', '2'] }, { role_ids: [readers] }, { role_ids: [2, readers] }, { role: 'admin' }, { role: 'admin', role_ids: [2] },
      { user_group_id: admins }, { user_group_id: String(admins) }, { bucket_id: bucket }, { bucket_id: String(bucket), user_group_id: null },
    ]) {
      const res = await call(t, 'POST', '/users.json', creatorAuth, newUser('climber', extra));
      assert.deepEqual([res.statusCode, res.body], [403, forbiddenJson('users.update')], JSON.stringify(extra));
    }
    const xml = await call(t, 'POST', '/users.xml', creatorAuth, '<user><login>climber</login><email>climber@example.com</email><password>a-password</password><role_ids type="array"><item>1</item></role_ids></user>', 'application/xml');
    assert.deepEqual([xml.statusCode, xml.headers['content-type'], xml.body], [403, 'application/xml; charset=utf-8', forbiddenXml('users.update')]);
    assert.deepEqual(await state(), before);
  });

  it('creates a user with the defaults, given or not', async () => {
    const bodies: Array<[string, Record<string, unknown>]> = [
      ['plain1', {}], ['plain2', { role: 'user' }], ['plain3', { role_ids: [2] }], ['plain4', { role_ids: ['2'], bucket_id: null, user_group_id: null }], ['plain5', { bucket_id: '', user_group_id: '' }],
    ];
    for (const [login, extra] of bodies) {
      const res = await call(t, 'POST', '/users.json', creatorAuth, newUser(login, extra));
      assert.equal(res.statusCode, 201, `${login}: ${res.body}`);
    }
    const { users, roles } = await state();
    const made = users.filter((user) => user.login.startsWith('plain'));
    assert.deepEqual(made.map((user) => [user.login, user.bucket_id, user.user_group_id]), bodies.map(([login]) => [login, null, null]));
    assert.deepEqual(roles.filter(([login]) => login.startsWith('plain')), bodies.map(([login]) => [login, 'user', [2]]));
  });

  it('a holder of users.update gives a new user any role, group and bucket', async () => {
    const res = await call(t, 'POST', '/users.json', t.adminAuth, newUser('chosen', { role_ids: [readers], user_group_id: admins, bucket_id: bucket }));
    assert.equal(res.statusCode, 201, res.body);
    const row = await t.database.db.selectFrom('users').select(['bucket_id', 'user_group_id']).where('login', '=', 'chosen').executeTakeFirstOrThrow();
    assert.deepEqual([Number(row.bucket_id), Number(row.user_group_id)], [bucket, admins]);
    assert.deepEqual((await rolesInDatabase(t.database)).find(([login]) => login === 'chosen'), ['chosen', 'user', [readers]]);
  });
});

/** A stored datetime as the API writes it. */
const wire = (stored: string) => `${stored.slice(0, 19)}+00:00`;

describe('/roles and /permissions', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  /** The permission records as the API must show them, from the catalogue and their stored times. */
  async function permissionRecords(ids?: number[]): Promise<Array<{ permission: Record<string, unknown> }>> {
    const rows = await t.database.db.selectFrom('permissions').selectAll().orderBy('id').execute();
    return rows.filter((row) => ids === undefined || ids.includes(Number(row.id)))
      .map((row) => ({ permission: { id: Number(row.id), identifier: row.identifier, label: row.label, created_at: wire(row.created_at), updated_at: wire(row.updated_at) } }));
  }

  /** The role record as the API must show it, from what is stored. */
  async function roleRecord(id: number): Promise<{ role: Record<string, unknown> }> {
    const row = await t.database.db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const held = await t.database.db.selectFrom('role_permissions').select('permission_id').where('role_id', '=', id).execute();
    const users = await t.database.db.selectFrom('user_roles').select('user_id').where('role_id', '=', id).execute();
    return {
      role: {
        id, label: row.label, identifier: row.identifier, system: Number(row.system) === 1, requires_two_factor: Number(row.requires_two_factor) === 1, users_count: users.length,
        created_at: wire(row.created_at), updated_at: wire(row.updated_at), permissions: await permissionRecords(held.map((h) => Number(h.permission_id))),
      },
    };
  }

  it('GET /permissions lists the catalogue, paginated, in JSON and XML', async () => {
    const all = await call(t, 'GET', '/permissions.json?per_page=50', t.adminAuth);
    assert.equal(all.statusCode, 200);
    assert.equal(all.headers['x-total'], String(PERMISSIONS.length));
    assert.equal(all.body, JSON.stringify(await permissionRecords()));
    const page = await call(t, 'GET', '/permissions.xml?per_page=1&page=3', t.adminAuth);
    assert.equal(page.statusCode, 200);
    assert.deepEqual([page.headers['x-total'], page.headers['x-limit'], page.headers['x-page']], [String(PERMISSIONS.length), '1', '3']);
    const [third] = await permissionRecords([3]);
    assert.equal(page.body, `<?xml version="1.0" encoding="UTF-8"?>
<permissions type="array">
  <permission>
    <id type="integer">3</id>
    <identifier>users.create</identifier>
    <label>Create users</label>
    <created_at type="datetime">${third!.permission.created_at as string}</created_at>
    <updated_at type="datetime">${third!.permission.updated_at as string}</updated_at>
  </permission>
</permissions>
`);
  });

  it('creates, reads, edits (wrapped or not, JSON or XML), clones and deletes a role', async () => {
    const made = await call(t, 'POST', '/roles.json', t.adminAuth, { role: { label: 'Error readers', permission_ids: [22, '25'] } });
    assert.equal(made.statusCode, 201);
    assert.equal(made.headers.location, '/roles/3.json');
    assert.equal(made.body, JSON.stringify(await roleRecord(3)));
    assert.deepEqual(made.json<{ role: { identifier: string; system: boolean; permissions: unknown[] } }>().role.identifier, 'error_readers');

    // The Go SDK's edit: unwrapped.
    assert.equal((await call(t, 'PUT', '/roles/3.json', t.adminAuth, { label: 'Readers', permission_ids: [22] })).statusCode, 204);
    const read = await call(t, 'GET', '/roles/3.json', t.adminAuth);
    assert.equal(read.body, JSON.stringify(await roleRecord(3)));
    assert.equal(read.json<{ role: { label: string } }>().role.label, 'Readers');
    assert.deepEqual(await permissionRecords([22]), (await roleRecord(3)).role.permissions);

    // The PHP wrapper's, in XML.
    const xml = '<role><label>Readers</label><permission_ids type="array"><item>22</item><item>26</item></permission_ids></role>';
    assert.equal((await call(t, 'PUT', '/roles/3.xml', t.adminAuth, xml, 'application/xml')).statusCode, 204);
    const asXml = await call(t, 'GET', '/roles/3.xml', t.adminAuth);
    const record = (await roleRecord(3)).role;
    const permissions = record.permissions as Array<{ permission: Record<string, string | number> }>;
    assert.equal(asXml.body, `<?xml version="1.0" encoding="UTF-8"?>
<role>
  <id type="integer">3</id>
  <label>Readers</label>
  <identifier>error_readers</identifier>
  <system type="boolean">false</system>
  <requires_two_factor type="boolean">false</requires_two_factor>
  <users_count type="integer">0</users_count>
  <created_at type="datetime">${record.created_at as string}</created_at>
  <updated_at type="datetime">${record.updated_at as string}</updated_at>
  <permissions type="array">
${permissions.map(({ permission: p }) => `    <permission>
      <id type="integer">${p.id}</id>
      <identifier>${p.identifier}</identifier>
      <label>${p.label}</label>
      <created_at type="datetime">${p.created_at}</created_at>
      <updated_at type="datetime">${p.updated_at}</updated_at>
    </permission>
`).join('')}  </permissions>
</role>
`);
    assert.deepEqual(permissions.map(({ permission }) => permission.identifier), ['infrastructure_errors.read', 'webhook_deliveries.read']);

    const clone = await call(t, 'POST', '/roles/3/clone.json', t.adminAuth);
    assert.equal(clone.statusCode, 201);
    assert.equal(clone.headers.location, '/roles/4.json');
    assert.equal(clone.body, JSON.stringify(await roleRecord(4)));
    assert.deepEqual([clone.json<{ role: { label: string } }>().role.label, clone.json<{ role: { identifier: string } }>().role.identifier], ['Readers (copy)', 'error_readers_copy']);

    const list = await call(t, 'GET', '/roles.json?per_page=2&page=2', t.adminAuth);
    assert.deepEqual([list.headers['x-total'], list.headers['x-limit'], list.headers['x-page']], ['4', '2', '2']);
    assert.equal(list.body, JSON.stringify([await roleRecord(3), await roleRecord(4)]));

    assert.equal((await call(t, 'DELETE', '/roles/4.json', t.adminAuth)).statusCode, 204);
    assert.equal((await call(t, 'GET', '/roles/4.json', t.adminAuth)).statusCode, 404);
    assert.equal((await call(t, 'DELETE', '/roles/4.json', t.adminAuth)).statusCode, 404);
    assert.deepEqual((await t.database.db.selectFrom('role_permissions').select('role_id').where('role_id', '=', 4).execute()), []);
  });

  it('keeps the system roles: never deleted, identifiers fixed, admin with every permission; a role in use is not deleted', async () => {
    for (const id of [1, 2]) {
      const res = await call(t, 'DELETE', `/roles/${id}.json`, t.adminAuth);
      assert.equal(res.statusCode, 422);
      assert.equal(res.body, '{"errors":{"base":["A system role cannot be deleted"]}}');
    }
    const renamed = await call(t, 'PUT', '/roles/2.json', t.adminAuth, { role: { identifier: 'member' } });
    assert.equal(renamed.body, '{"errors":{"identifier":["of a system role cannot be changed"]}}');
    const fewer = await call(t, 'PUT', '/roles/1.json', t.adminAuth, { permission_ids: [1] });
    assert.equal(fewer.body, '{"errors":{"permission_ids":["of the admin role are every permission"]}}');
    // Its label may change, and its identifier be sent unchanged.
    assert.equal((await call(t, 'PUT', '/roles/1.json', t.adminAuth, { label: 'Root', identifier: 'admin' })).statusCode, 204);
    assert.deepEqual((await roleRecord(1)).role.label, 'Root');

    await call(t, 'POST', '/roles.json', t.adminAuth, { role: { label: 'Readers', permission_ids: [22] } });
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { role_ids: [2, 3] })).statusCode, 204);
    const inUse = await call(t, 'DELETE', '/roles/3.json', t.adminAuth);
    assert.equal(inUse.statusCode, 422);
    assert.equal(inUse.body, '{"errors":{"base":["A role that users hold cannot be deleted"]}}');
    assert.equal((await roleRecord(3)).role.users_count, 1);
  });

  it('a role given to a user while its delete waits is not deleted: 422, not a fault', { skip: !onPostgres && 'SQLite runs one writer at a time' }, async () => {
    await call(t, 'POST', '/roles.json', t.adminAuth, { role: { label: 'Readers', permission_ids: [22] } });
    const other = new pg.Client({ connectionString: t.config.databaseUrl });
    await other.connect();
    try {
      // Another process gives alice the role; the delete starts before that commits and waits for its lock.
      await other.query('begin');
      await other.query('insert into user_roles (user_id, role_id) values ($1, 3)', [t.alice.id]);
      const deleting = call(t, 'DELETE', '/roles/3.json', t.adminAuth);
      await waitForLockWait(other);
      await other.query('commit');
      const res = await deleting;
      assert.equal(res.statusCode, 422);
      assert.equal(res.body, '{"errors":{"base":["A role that users hold cannot be deleted"]}}');
      assert.equal((await roleRecord(3)).role.users_count, 1);
    } finally {
      await other.end();
    }
  });

  it('a role only users marked deleted hold is deleted: they give it up, one left with none holds user', async () => {
    await call(t, 'POST', '/roles.json', t.adminAuth, { role: { label: 'Readers', permission_ids: [22] } });
    await call(t, 'POST', '/roles.json', t.adminAuth, { role: { label: 'Writers', permission_ids: [23] } });
    const add = async (login: string, roleIds: number[]) => (await call(t, 'POST', '/users.json', t.adminAuth, { user: { login, email: `${login}@example.com`, password: 'a-password', role_ids: roleIds } })).json<{ user: { id: number } }>().user.id;
    const bob = await add('bob', [3]);
    const carol = await add('carol', [3, 4]);
    for (const id of [bob, carol]) assert.equal((await call(t, 'DELETE', `/users/${id}.json`, t.adminAuth, { force: 1 })).statusCode, 204);
    assert.equal((await call(t, 'DELETE', '/roles/3.json', t.adminAuth)).statusCode, 204);
    const held = await t.database.db.selectFrom('user_roles').select(['user_id', 'role_id']).where('user_id', 'in', [bob, carol]).orderBy('user_id').orderBy('role_id').execute();
    assert.deepEqual(held.map((row) => [Number(row.user_id), Number(row.role_id)]), [[bob, 2], [carol, 4]]);
    // An active user holding it still keeps it.
    await add('dave', [4]);
    const refused = await call(t, 'DELETE', '/roles/4.json', t.adminAuth);
    assert.deepEqual([refused.statusCode, refused.body], [422, '{"errors":{"base":["A role that users hold cannot be deleted"]}}']);
  });

  it('names every bad field of a role in one 422', async () => {
    await call(t, 'POST', '/roles.json', t.adminAuth, { role: { label: 'Readers', identifier: 'readers' } });
    for (const [body, errors] of [
      [{ role: { permission_ids: [1] } }, { label: ["can't be blank"] }],
      [{ role: { label: ' ', identifier: 'readers', permission_ids: [1, 999] } }, { label: ["can't be blank"], identifier: ['has already been taken'], permission_ids: ['names no permission: 999'] }],
      [{ role: { label: 7, identifier: 'Bad Id', permission_ids: 'x' } }, { label: ['must be a string'], identifier: ['must be lower-case letters, digits and _ . -, not starting with . or -'], permission_ids: ['must be a list of ids'] }],
    ] as const) {
      const res = await call(t, 'POST', '/roles.json', t.adminAuth, body);
      assert.equal(res.statusCode, 422);
      assert.equal(res.body, JSON.stringify({ errors }));
    }
    const count = await t.database.db.selectFrom('roles').select('id').execute();
    assert.equal(count.length, 3);
    // A label alone: the identifier is made from it, and kept free.
    const again = await call(t, 'POST', '/roles.json', t.adminAuth, { label: 'Readers' });
    assert.equal(again.json<{ role: { identifier: string } }>().role.identifier, 'readers_2');
  });

  it('answers 403 to a user without the roles permissions', async () => {
    for (const [method, url, body, needs] of [
      ['GET', '/roles.json', undefined, 'roles.read'], ['GET', '/roles/1.json', undefined, 'roles.read'], ['GET', '/permissions.json', undefined, 'roles.read'],
      ['POST', '/roles.json', { role: { label: 'Mine' } }, 'roles.create'], ['PUT', '/roles/2.json', { label: 'Mine' }, 'roles.update'],
      ['DELETE', '/roles/2.json', undefined, 'roles.delete'], ['POST', '/roles/2/clone.json', undefined, 'roles.create'],
    ] as const) {
      const res = await call(t, method, url, t.aliceAuth, body);
      assert.equal(res.statusCode, 403, `${method} ${url}`);
      assert.equal(res.body, forbiddenJson(needs));
    }
  });

  it('a change to what a role grants holds at once, also for credentials verified moments ago', async () => {
    await call(t, 'POST', '/roles.json', t.adminAuth, { role: { label: 'Readers', permission_ids: [22] } });
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { role_ids: [2, 3] })).statusCode, 204);
    assert.equal((await call(t, 'GET', `${ERRORS}.json`, t.aliceAuth)).statusCode, 200);
    assert.equal((await call(t, 'PUT', '/roles/3.json', t.adminAuth, { permission_ids: [] })).statusCode, 204);
    assert.equal((await call(t, 'GET', `${ERRORS}.json`, t.aliceAuth)).statusCode, 403);
    assert.equal((await call(t, 'PUT', '/roles/3.json', t.adminAuth, { role: { permission_ids: ['22'] } })).statusCode, 204);
    assert.equal((await call(t, 'GET', `${ERRORS}.json`, t.aliceAuth)).statusCode, 200);
  });

  it('a new label of a role shows at once in the records of its holders, also to themselves', async () => {
    await call(t, 'POST', '/roles.json', t.adminAuth, { role: { label: 'Readers', permission_ids: [22] } });
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { role_ids: [2, 3] })).statusCode, 204);
    const labels = async () => ((JSON.parse((await call(t, 'GET', `/users/${t.alice.id}.json`, t.aliceAuth)).body) as { user: { roles: Array<{ role: { label: string } }> } }).user.roles.map(({ role }) => role.label));
    assert.deepEqual(await labels(), ['User', 'Readers']);
    assert.equal((await call(t, 'PUT', '/roles/3.json', t.adminAuth, { label: 'Error readers' })).statusCode, 204);
    assert.deepEqual(await labels(), ['User', 'Error readers']);
  });
});

/** Resolves once some statement on the database waits for a lock (PostgreSQL). */
async function waitForLockWait(client: pg.Client): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const { rows } = await client.query("select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()");
    if ((rows[0] as { n: number }).n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no statement waited for a lock within 5 s');
}
