import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';
import { forbiddenJson, forbiddenXml } from './support/error-reports.js';
import { assertAccessDenied, login, withCookie } from './support/http.js';

/**
 * Who may do what: every endpoint for every kind of caller. The fixture has admin (1), alice (2, user),
 * bob (3, user; "the other user") and a second administrator (4), so an administrator's destructive
 * actions on itself are not refused as "the last administrator" (user-management.test.ts covers that).
 */

const NOT_FOUND_JSON = '{"errors":{"base":["Resource not found"]}}';

type Actor = 'anonymous' | 'user' | 'other user' | 'admin';
const ACTORS: Actor[] = ['anonymous', 'user', 'other user', 'admin'];

/** The actor's own id, and the id of someone else. */
const PASSWORDS: Record<Actor, string> = { anonymous: 'none', user: 'alice-password', 'other user': 'shared-password', admin: 'admin-password' };
const SELF: Record<Actor, number> = { anonymous: 2, user: 2, 'other user': 3, admin: 1 };
const OTHER: Record<Actor, number> = { anonymous: 3, user: 3, 'other user': 2, admin: 2 };

interface Endpoint {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: (actor: Actor) => string;
  body?: (actor: Actor) => unknown;
  expected: Record<Actor, number>;
  /** What a 403 names as missing (docs/api.md#errors). */
  needs?: string;
  /** Changes state a later cell would notice: each cell gets a fresh app. */
  destructive?: boolean;
}

let created = 0;
const ERROR_BODY = () => ({ infrastructure_error: { error_class: 'TypeError', message: 'boom', backtrace: "src/a.ts:1:in 'f'" } });

const ENDPOINTS: Endpoint[] = [
  { name: 'GET /users.json', method: 'GET', url: () => '/users.json', expected: { anonymous: 401, user: 200, 'other user': 200, admin: 200 } },
  {
    name: 'POST /users.json',
    method: 'POST',
    url: () => '/users.json',
    body: () => {
      created += 1;
      return { user: { login: `new${created}`, email: `new${created}@example.com`, password: 'new-password' } };
    },
    needs: 'users.create',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 201 },
  },
  { name: 'GET /users/<self>.json', method: 'GET', url: (a) => `/users/${SELF[a]}.json`, expected: { anonymous: 401, user: 200, 'other user': 200, admin: 200 } },
  { name: 'GET /users/<other>.json', method: 'GET', url: (a) => `/users/${OTHER[a]}.json`, needs: 'users.read', expected: { anonymous: 401, user: 403, 'other user': 403, admin: 200 } },
  { name: 'GET /users/<unknown>.json', method: 'GET', url: () => '/users/999.json', needs: 'users.read', expected: { anonymous: 401, user: 403, 'other user': 403, admin: 404 } },
  {
    name: 'PUT /users/<self>.json',
    method: 'PUT',
    url: (a) => `/users/${SELF[a]}.json`,
    body: () => ({ user: { first_name: 'Changed' } }),
    expected: { anonymous: 401, user: 204, 'other user': 204, admin: 204 },
  },
  {
    name: 'PUT /users/<self>.json making itself an administrator',
    method: 'PUT',
    url: (a) => `/users/${SELF[a]}.json`,
    body: () => ({ role: 'admin' }),
    needs: 'users.update',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 204 },
    destructive: true,
  },
  {
    name: 'PUT /users/<other>.json',
    method: 'PUT',
    url: (a) => `/users/${OTHER[a]}.json`,
    body: () => ({ user: { first_name: 'Changed' } }),
    needs: 'users.update',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 204 },
  },
  {
    name: 'DELETE /users/<self>.json',
    method: 'DELETE',
    url: (a) => `/users/${SELF[a]}.json`,
    body: () => ({ force: 1 }),
    needs: 'users.delete',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 204 },
    destructive: true,
  },
  {
    name: 'DELETE /users/<other>.json',
    method: 'DELETE',
    url: (a) => `/users/${OTHER[a]}.json`,
    body: () => ({ force: 1 }),
    needs: 'users.delete',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 204 },
    destructive: true,
  },
  {
    name: 'POST /users/<self>/suspend.json',
    method: 'POST',
    url: (a) => `/users/${SELF[a]}/suspend.json`,
    needs: 'users.suspend',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 200 },
    destructive: true,
  },
  {
    name: 'POST /users/<other>/suspend.json',
    method: 'POST',
    url: (a) => `/users/${OTHER[a]}/suspend.json`,
    needs: 'users.suspend',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 200 },
    destructive: true,
  },
  {
    name: 'POST /users/<self>/activate.json',
    method: 'POST',
    url: (a) => `/users/${SELF[a]}/activate.json`,
    needs: 'users.suspend',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 200 },
  },
  {
    name: 'POST /users/<other>/activate.json',
    method: 'POST',
    url: (a) => `/users/${OTHER[a]}/activate.json`,
    needs: 'users.suspend',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 200 },
  },
  {
    name: 'POST /users/<self>/make_new_api_key.json',
    method: 'POST',
    url: (a) => `/users/${SELF[a]}/make_new_api_key.json`,
    // Through the session cookie a new key needs the caller's password (docs/security.md#self-service); Basic reads no body.
    body: (a) => ({ current_password: PASSWORDS[a] }),
    expected: { anonymous: 401, user: 200, 'other user': 200, admin: 200 },
  },
  {
    name: 'POST /users/<other>/make_new_api_key.json',
    method: 'POST',
    url: (a) => `/users/${OTHER[a]}/make_new_api_key.json`,
    // Through the session cookie a new key needs the caller's password (docs/security.md#self-service); Basic reads no body.
    body: (a) => ({ current_password: PASSWORDS[a] }),
    needs: 'users.api_key',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 200 },
  },
  { name: 'DELETE /session.json', method: 'DELETE', url: () => '/session.json', expected: { anonymous: 401, user: 204, 'other user': 204, admin: 204 } },
  { name: 'GET /version.json', method: 'GET', url: () => '/version.json', expected: { anonymous: 401, user: 200, 'other user': 200, admin: 200 } },
  {
    name: 'GET /sysadmin_tools/infrastructure/errors/1.json',
    method: 'GET',
    url: () => '/sysadmin_tools/infrastructure/errors/1.json',
    needs: 'infrastructure_errors.read',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 200 },
  },
  {
    name: 'GET /sysadmin_tools/infrastructure/errors/<unknown>.json',
    method: 'GET',
    url: () => '/sysadmin_tools/infrastructure/errors/999.json',
    needs: 'infrastructure_errors.read',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 404 },
  },
  {
    name: 'POST /sysadmin_tools/infrastructure/errors.json',
    method: 'POST',
    url: () => '/sysadmin_tools/infrastructure/errors.json',
    body: ERROR_BODY,
    needs: 'infrastructure_errors.create',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 201 },
    destructive: true,
  },
  {
    name: 'POST /sysadmin_tools/infrastructure/errors/1/report.json',
    method: 'POST',
    url: () => '/sysadmin_tools/infrastructure/errors/1/report.json',
    needs: 'infrastructure_errors.report',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 200 },
    destructive: true,
  },
  {
    name: 'GET /sysadmin_tools/infrastructure/deliveries.json',
    method: 'GET',
    url: () => '/sysadmin_tools/infrastructure/deliveries.json',
    needs: 'webhook_deliveries.read',
    expected: { anonymous: 401, user: 403, 'other user': 403, admin: 200 },
  },
];

/** admin, alice, bob (user001) and a second administrator (user002), and one recorded infrastructure error. */
async function fixture(): Promise<TestApp> {
  const t = await createTestApp();
  await t.addUsers(1, 'user');
  await t.addUsers(1, 'admin');
  const res = await t.app.inject({
    method: 'POST',
    url: '/sysadmin_tools/infrastructure/errors.json',
    headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
    payload: JSON.stringify({ infrastructure_error: { error_class: 'RangeError', message: 'recorded', backtrace: "src/b.ts:2:in 'g'" } }),
  });
  assert.equal(res.statusCode, 201);
  return t;
}

type Via = 'Basic' | 'session cookie';

async function credentialsFor(t: TestApp, actor: Actor, via: Via): Promise<Record<string, string>> {
  const authorization = {
    anonymous: undefined,
    user: t.aliceAuth,
    'other user': t.basic('user001', 'shared-password'),
    admin: t.adminAuth,
  }[actor];
  if (authorization === undefined) return {};
  if (via === 'Basic') return { authorization };
  return withCookie(await login(t.app, authorization));
}

/** Everything a refused request must leave as it was. */
async function snapshot(t: TestApp): Promise<unknown> {
  const users = await t.database.db.selectFrom('users').selectAll().orderBy('id').execute();
  const errors = await t.database.db.selectFrom('infrastructure_errors').selectAll().orderBy('id').execute();
  return { users, errors };
}

async function check(t: TestApp, endpoint: Endpoint, actor: Actor, via: Via): Promise<void> {
  const expected = endpoint.expected[actor];
  const headers: Record<string, string> = { accept: 'application/json', ...(await credentialsFor(t, actor, via)) };
  const body = endpoint.body?.(actor);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const before = expected >= 400 ? await snapshot(t) : undefined;
  const res: LightMyRequestResponse = await t.app.inject({
    method: endpoint.method,
    url: endpoint.url(actor),
    headers,
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  assert.equal(res.statusCode, expected, `${actor} ${endpoint.name}: ${res.statusCode} ${res.body}`);
  if (expected === 401) assertAccessDenied(res);
  if (expected === 403) assert.equal(res.body, forbiddenJson(endpoint.needs ?? 'a permission the table names'));
  if (expected === 404) assert.equal(res.body, NOT_FOUND_JSON);
  if (expected === 204) assert.equal(res.body, '');
  if (before !== undefined) assert.deepEqual(await snapshot(t), before, `${actor} ${endpoint.name} changed state`);
}

for (const via of ['Basic', 'session cookie'] as const) {
  describe(`access matrix (credentials by ${via})`, () => {
    let shared: TestApp;
    before(async () => {
      shared = await fixture();
    });
    after(() => shared.close());

    for (const endpoint of ENDPOINTS) {
      for (const actor of ACTORS) {
        if (via === 'session cookie' && actor === 'anonymous') continue;
        it(`${actor}: ${endpoint.name} -> ${endpoint.expected[actor]}`, async () => {
          if (!endpoint.destructive) return check(shared, endpoint, actor, via);
          const fresh = await fixture();
          try {
            await check(fresh, endpoint, actor, via);
          } finally {
            await fresh.close();
          }
        });
      }
    }
  });
}

describe('access matrix effects', () => {
  let t: TestApp;
  before(async () => {
    t = await fixture();
  });
  after(() => t.close());

  it('an ordinary user sees only itself in the list, an administrator everyone', async () => {
    const ids = async (authorization: string) => {
      const res = await t.app.inject({ url: '/users.json', headers: { authorization } });
      return (JSON.parse(res.body) as Array<{ user: { id: number } }>).map((entry) => entry.user.id);
    };
    assert.deepEqual(await ids(t.aliceAuth), [2]);
    assert.deepEqual(await ids(t.basic('user001', 'shared-password')), [3]);
    assert.deepEqual(await ids(t.adminAuth), [1, 2, 3, 4]);
  });

  it('the same holds in XML: a 403 on an .xml path is XML', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/users/1/suspend.xml', headers: { authorization: t.aliceAuth } });
    assert.equal(res.statusCode, 403);
    assert.equal(res.body, forbiddenXml('users.suspend'));
  });
});
