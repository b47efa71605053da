import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';

/** Asks until `check` passes: another process learns of a change within milliseconds, not at once. */
async function eventually(check: () => Promise<void>, limitMs = 3000): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

describe('two processes on one database', () => {
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

  const list = (app: FastifyInstance) => app.inject({ url: '/users.json', headers: { authorization: t.adminAuth } });

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
    await eventually(async () => assert.equal((await list(other.app)).headers['x-total'], '3'));
  });

  it('accept each other\'s session cookies', async () => {
    const login = await t.app.inject({ url: '/version.json', headers: { authorization: t.aliceAuth } });
    const cookie = String(login.headers['set-cookie']).split(';')[0] as string;
    const res = await other.app.inject({ url: '/version.json', headers: { cookie } });
    assert.equal(res.statusCode, 200);
  });

  it('see a logout in one as the end of that session in the other, once the cache TTL has passed', async () => {
    const login = await t.app.inject({ url: '/version.json', headers: { authorization: t.aliceAuth } });
    const cookie = String(login.headers['set-cookie']).split(';')[0] as string;
    assert.equal((await other.app.inject({ url: '/version.json', headers: { cookie } })).statusCode, 200);
    const logout = await t.app.inject({ method: 'DELETE', url: '/session.json', headers: { cookie } });
    assert.equal(logout.statusCode, 204);
    assert.equal((await t.app.inject({ url: '/version.json', headers: { cookie } })).statusCode, 401);
    t.time.advance(5);
    assert.equal((await other.app.inject({ url: '/version.json', headers: { cookie } })).statusCode, 401);
  });

  it('see a suspension in one as the end of access in the other, once the cache TTL has passed', async () => {
    const [bob] = await t.addUsers(1);
    const bobAuth = t.basic(bob!.login, 'shared-password');
    assert.equal((await other.app.inject({ url: '/version.json', headers: { authorization: bobAuth } })).statusCode, 200);
    const suspended = await t.app.inject({ method: 'POST', url: `/users/${bob!.id}/suspend.json`, headers: { authorization: t.adminAuth } });
    assert.equal(suspended.statusCode, 200);
    t.time.advance(5);
    assert.equal((await other.app.inject({ url: '/version.json', headers: { authorization: bobAuth } })).statusCode, 401);
  });
});
