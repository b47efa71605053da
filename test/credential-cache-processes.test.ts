import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { runCmi, type RunningServer, startServer } from './support/cli.js';
import { type FreshDatabase, freshDatabase } from './support/database.js';
import { ACCESS_DENIED_JSON } from './support/http.js';

// A change to a user made through one `cmi serve` (or `cmi local users`) drops the credentials the
// other `cmi serve` verified before its answer is received, not after CMI_AUTH_CACHE_TTL
// (docs/security.md#the-verification-cache): two real processes on one database, over real sockets.
// The TTL is a minute here, so only the drop can explain a 401 within the test.

const PASSWORD = 'admin-password';
const ADMIN = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
const TTL_SECONDS = 60;

interface Answer {
  status: number;
  body: string;
  setCookie: string[];
  total: string | undefined;
}

describe('the credential cache across two cmi serve processes on one database', { timeout: 600_000 }, () => {
  let fresh: FreshDatabase;
  let a: RunningServer;
  let b: RunningServer;
  // Kept-alive connections, as API clients hold them: B answers a repeated header from the connection's
  // last answer (docs/security.md#kept-alive-connections), which must end with the drop too.
  const keptAlive = new Agent({ keepAlive: true, maxSockets: 1 });

  before(async () => {
    fresh = await freshDatabase();
    const env = { DATABASE_URL: fresh.url, CMI_ADMIN_PASSWORD: PASSWORD, CMI_AUTH_CACHE_TTL: String(TTL_SECONDS) };
    a = await startServer(env);
    b = await startServer(env);
  });
  after(async () => {
    keptAlive.destroy();
    for (const server of [a, b]) {
      if (server === undefined || server.child.exitCode !== null || server.child.signalCode !== null) continue;
      const kill = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
      await server.stop();
      clearTimeout(kill);
    }
    await fresh?.drop();
  });

  /** One request over a real socket: on the kept-alive connection, or on a new one. */
  const send = (server: RunningServer, method: string, path: string, headers: Record<string, string>, options: { body?: unknown; fresh?: boolean } = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
      const all = payload === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
      const req = request(`${server.baseUrl}${path}`, { method, headers: all, agent: options.fresh ? false : keptAlive }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, setCookie: res.headers['set-cookie'] ?? [], total: res.headers['x-total'] as string | undefined }));
      });
      req.on('error', reject);
      req.end(payload);
    });

  const version = (server: RunningServer, headers: Record<string, string>, fresh = false) => send(server, 'GET', '/version.json', headers, { fresh });
  const asAdmin = async (method: string, path: string, body?: unknown) => {
    const answer = await send(a, method, path, { authorization: ADMIN }, { body, fresh: true });
    assert.ok(answer.status < 300, `${method} ${path}: ${answer.status} ${answer.body}`);
    return answer;
  };
  let users = 0;
  const newUser = async (role: 'admin' | 'user' = 'user') => {
    users += 1;
    const login = `user${users}`;
    const created = await asAdmin('POST', '/users.json', { user: { login, email: `${login}@example.com`, password: `${login}-password`, role } });
    const { user } = JSON.parse(created.body) as { user: { id: number } };
    return { id: user.id, login, auth: basic(login, `${login}-password`) };
  };

  /** B accepts `headers` twice (the second time from its cache), on a kept-alive connection and on a new one. */
  const warm = async (headers: Record<string, string>) => {
    for (let i = 0; i < 2; i++) {
      for (const fresh of [false, true]) {
        const answer = await version(b, headers, fresh);
        assert.deepEqual([answer.status, answer.body], [200, '{"version":"6.7"}']);
      }
    }
  };
  /** B refuses `headers` on the very next request, kept-alive and new connection alike, long before the TTL. */
  const refusedAtOnce = async (headers: Record<string, string>, warmedAt: number) => {
    const kept = await version(b, headers);
    const fresh = await version(b, headers, true);
    assert.deepEqual([kept.status, kept.body], [401, ACCESS_DENIED_JSON]);
    assert.deepEqual([fresh.status, fresh.body], [401, ACCESS_DENIED_JSON]);
    assert.ok(Date.now() - warmedAt < (TTL_SECONDS * 1000) / 2);
  };

  it('a suspension through A: B refuses the user\'s Basic credentials on its next request', async () => {
    const user = await newUser();
    const warmedAt = Date.now();
    await warm({ authorization: user.auth });
    await asAdmin('POST', `/users/${user.id}/suspend.json`);
    await refusedAtOnce({ authorization: user.auth }, warmedAt);
  });

  it('a deletion through A: B refuses the user at once', async () => {
    const user = await newUser();
    const warmedAt = Date.now();
    await warm({ authorization: user.auth });
    await asAdmin('DELETE', `/users/${user.id}.json`);
    await refusedAtOnce({ authorization: user.auth }, warmedAt);
  });

  it('a new API key through A: B refuses the old key at once and accepts the new one', async () => {
    const user = await newUser();
    const first = JSON.parse((await asAdmin('POST', `/users/${user.id}/make_new_api_key.json`)).body) as { user: { api_key: string } };
    const oldKey = { authorization: basic(user.login, first.user.api_key) };
    const warmedAt = Date.now();
    await warm(oldKey);
    const second = JSON.parse((await asAdmin('POST', `/users/${user.id}/make_new_api_key.json`)).body) as { user: { api_key: string } };
    await refusedAtOnce(oldKey, warmedAt);
    assert.equal((await version(b, { authorization: basic(user.login, second.user.api_key) })).status, 200);
    // The password was never part of the key: it still works.
    assert.equal((await version(b, { authorization: user.auth })).status, 200);
  });

  it('a named API key revoked through A: B refuses it at once and goes on accepting the user\'s other key', async () => {
    const user = await newUser();
    const make = async (description: string) => JSON.parse((await asAdmin('POST', `/users/${user.id}/user_api_keys.json`, { user_api_key: { description } })).body) as { user_api_key: { id: number; api_key: string } };
    const revoked = await make('revoked');
    const kept = await make('kept');
    const revokedKey = { authorization: basic(user.login, revoked.user_api_key.api_key) };
    const warmedAt = Date.now();
    await warm(revokedKey);
    await asAdmin('DELETE', `/users/${user.id}/user_api_keys/${revoked.user_api_key.id}.json`);
    await refusedAtOnce(revokedKey, warmedAt);
    assert.equal((await version(b, { authorization: basic(user.login, kept.user_api_key.api_key) })).status, 200);
  });

  it('a password change through A: B refuses the old password at once', async () => {
    const user = await newUser();
    const warmedAt = Date.now();
    await warm({ authorization: user.auth });
    await asAdmin('PUT', `/users/${user.id}.json`, { user: { password: 'a-new-password' } });
    await refusedAtOnce({ authorization: user.auth }, warmedAt);
    assert.equal((await version(b, { authorization: basic(user.login, 'a-new-password') })).status, 200);
  });

  it('a login change through A: B refuses the old login at once', async () => {
    const user = await newUser();
    const warmedAt = Date.now();
    await warm({ authorization: user.auth });
    await asAdmin('PUT', `/users/${user.id}.json`, { user: { login: `${user.login}-renamed` } });
    await refusedAtOnce({ authorization: user.auth }, warmedAt);
    assert.equal((await version(b, { authorization: basic(`${user.login}-renamed`, `${user.login}-password`) })).status, 200);
  });

  it('a demotion through A: B answers the former administrator as a user on its next request', async () => {
    const user = await newUser('admin');
    const list = async () => {
      const answer = await send(b, 'GET', '/users.json', { authorization: user.auth });
      const logins = (JSON.parse(answer.body) as Array<{ user: { login: string } }>).map((row) => row.user.login);
      return { status: answer.status, total: answer.total, logins };
    };
    const before = await list();
    assert.deepEqual([before.status, before.total], [200, String(users + 1)]);
    assert.deepEqual(await list(), before);
    await asAdmin('PUT', `/users/${user.id}.json`, { user: { role: 'user' } });
    assert.deepEqual(await list(), { status: 200, total: '1', logins: [user.login] });
  });

  it('what a role grants, and who holds it, changed through A: B decides by the new permissions on its next request', async () => {
    const permissions = JSON.parse((await asAdmin('GET', '/permissions.json?per_page=100')).body) as Array<{ permission: { id: number; identifier: string } }>;
    const idOf = (identifier: string) => permissions.find(({ permission }) => permission.identifier === identifier)!.permission.id;
    const role = async (label: string, granted: string[]) =>
      (JSON.parse((await asAdmin('POST', '/roles.json', { role: { label, permission_ids: granted.map(idOf) } })).body) as { role: { id: number } }).role.id;
    const readers = await role('cache readers', ['infrastructure_errors.read', 'users.read.own']);
    const user = await newUser();
    await asAdmin('PUT', `/users/${user.id}.json`, { user: { role_ids: [readers] } });
    const errors = async () => (await send(b, 'GET', '/sysadmin_tools/infrastructure/errors.json', { authorization: user.auth })).status;
    assert.deepEqual([await errors(), await errors()], [200, 200]);
    // Only role_permissions changes: no row of users is written.
    await asAdmin('PUT', `/roles/${readers}.json`, { role: { permission_ids: [idOf('users.read.own')] } });
    assert.equal(await errors(), 403);
    await asAdmin('PUT', `/roles/${readers}.json`, { role: { permission_ids: [idOf('infrastructure_errors.read'), idOf('users.read.own')] } });
    assert.deepEqual([await errors(), await errors()], [200, 200]);
    // Only user_roles changes: the user is given another role that does not read errors.
    const plain = await role('cache plain', ['users.read.own']);
    await asAdmin('PUT', `/users/${user.id}.json`, { user: { role_ids: [plain] } });
    assert.equal(await errors(), 403);
  });

  it('what a user group holds, and who belongs to it, changed through A: B decides by the new permissions on its next request', async () => {
    const permissions = JSON.parse((await asAdmin('GET', '/permissions.json?per_page=100')).body) as Array<{ permission: { id: number; identifier: string } }>;
    const idOf = (identifier: string) => permissions.find(({ permission }) => permission.identifier === identifier)!.permission.id;
    const readers = (JSON.parse((await asAdmin('POST', '/roles.json', { role: { label: 'group readers', permission_ids: [idOf('infrastructure_errors.read')] } })).body) as { role: { id: number } }).role.id;
    const group = (JSON.parse((await asAdmin('POST', '/user_groups.json', { user_group: { label: 'cache group' } })).body) as { user_group: { id: number } }).user_group.id;
    const user = await newUser();
    await asAdmin('PUT', `/users/${user.id}.json`, { user: { user_group_id: group } });
    const errors = async () => (await send(b, 'GET', '/sysadmin_tools/infrastructure/errors.json', { authorization: user.auth })).status;
    assert.deepEqual([await errors(), await errors()], [403, 403]);
    // What the group holds changes (the Go SDK's unwrapped edit): no row of users is written.
    await asAdmin('PUT', `/user_groups/${group}.json`, { role_ids: [readers] });
    assert.deepEqual([await errors(), await errors()], [200, 200]);
    // Only the user's group changes.
    await asAdmin('PUT', `/users/${user.id}.json`, { user: { user_group_id: null } });
    assert.equal(await errors(), 403);
  });

  it('a logout through A: B refuses that session\'s cookie at once, and goes on accepting the user', async () => {
    const user = await newUser();
    const signedIn = await version(a, { authorization: user.auth }, true);
    const token = /^_cmi_session=([^;]+);/.exec(signedIn.setCookie[0] ?? '')?.[1];
    assert.ok(token);
    const cookie = { cookie: `_cmi_session=${token}` };
    const warmedAt = Date.now();
    await warm(cookie);
    const logout = await send(a, 'DELETE', '/session.json', { ...cookie, 'x-requested-with': 'test' }, { fresh: true });
    assert.equal(logout.status, 204);
    await refusedAtOnce(cookie, warmedAt);
    assert.equal((await version(b, { authorization: user.auth })).status, 200);
  });

  it('a suspension at the command line (cmi local users suspend): B refuses the user at once', async () => {
    const user = await newUser();
    const warmedAt = Date.now();
    await warm({ authorization: user.auth });
    const suspended = await runCmi(['local', 'users', 'suspend', user.login], { DATABASE_URL: fresh.url, LOG_LEVEL: 'warn' });
    assert.equal(suspended.code, 0, suspended.stderr);
    await refusedAtOnce({ authorization: user.auth }, warmedAt);
  });
});
