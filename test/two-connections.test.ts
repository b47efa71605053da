import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { assertAccessDenied, get, login, withCookie } from './support/http.js';

// Two apps in this one Node process, each on its own connection (pool) to the same database and with
// its own caches, as two cmi processes would be (docs/operations.md#how-caches-stay-right-across-processes);
// but one process, one clock, one event loop.
describe('two apps on two connections to one database', () => {
  let t: TestApp;
  let other: { app: FastifyInstance; close(): Promise<void> };
  before(async () => {
    t = await createTestApp();
    other = await t.secondProcess();
  });
  after(async () => {
    await other.close();
    await t.close();
  });

  const list = (app: FastifyInstance) => get(app, '/users.json', { authorization: t.adminAuth });

  it('see each other\'s writes, even with list pages cached', async () => {
    assert.equal((await list(other.app)).headers['x-total'], '2');
    assert.equal((await list(other.app)).headers['x-total'], '2');
    const created = await t.app.inject({
      method: 'POST',
      url: '/users.json',
      headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
      payload: JSON.stringify({ user: { login: 'carol', email: 'carol@example.com', password: 'carol-password' } }),
    });
    assert.equal(created.statusCode, 201);
    assert.equal((await list(t.app)).headers['x-total'], '3');
    // The other connection learns of the write through the database (a change notification on
    // PostgreSQL, SQLite's data_version), not at once.
    await eventually(async () => assert.equal((await list(other.app)).headers['x-total'], '3'));
  });

  it('accept each other\'s session cookies', async () => {
    const session = withCookie(await login(t.app, t.aliceAuth));
    const res = await get(other.app, '/version.json', session);
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"version":"6.7"}');
  });

  // The other app's cache remembers the credential (the clock never moves here, so the TTL never
  // passes): only the change heard through the database can refuse it (docs/security.md#the-verification-cache).
  it('see a logout in one as the end of that session in the other, on its next request', async () => {
    const session = withCookie(await login(t.app, t.aliceAuth));
    assert.equal((await get(other.app, '/version.json', session)).statusCode, 200);
    assert.equal((await get(other.app, '/version.json', session)).statusCode, 200);
    const logout = await t.app.inject({ method: 'DELETE', url: '/session.json', headers: session });
    assert.equal(logout.statusCode, 204);
    assertAccessDenied(await get(t.app, '/version.json', session));
    assertAccessDenied(await get(other.app, '/version.json', session));
  });

  it('see a suspension in one as the end of access in the other, on its next request', async () => {
    const [bob] = await t.addUsers(1);
    const bobAuth = t.basic(bob!.login, 'shared-password');
    assert.equal((await get(other.app, '/version.json', { authorization: bobAuth })).statusCode, 200);
    assert.equal((await get(other.app, '/version.json', { authorization: bobAuth })).statusCode, 200);
    const suspended = await t.app.inject({ method: 'POST', url: `/users/${bob!.id}/suspend.json`, headers: { authorization: t.adminAuth } });
    assert.equal(suspended.statusCode, 200);
    assertAccessDenied(await get(other.app, '/version.json', { authorization: bobAuth }));
  });
});
