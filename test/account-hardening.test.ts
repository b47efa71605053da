import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ALICE, createTestApp, type TestApp } from './support/app.js';

// Issue 25, findings 4, 5, 9 and 10: what a hostile client still did to accounts. Each case runs on
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
