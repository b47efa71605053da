import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';
import { ACCESS_DENIED_JSON, SESSION_COOKIE } from './support/http.js';

// Ending sessions (docs/security.md#ending-sessions): DELETE /users/:id/sessions (one user's, also by the
// user itself) and OnApp's DELETE /users/drop_all (everyone's, as the PHP wrapper's drop_all sends it):
// the sessions end at once in this process and in another one on the same database, over real sockets;
// passwords and API keys keep working; each is audited.

interface Answer {
  status: number;
  body: string;
  contentType: string | null;
  cookies: string[];
}

async function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const res = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: await res.text(), contentType: res.headers.get('content-type'), cookies: res.headers.getSetCookie() };
}

/** As the PHP wrapper sends every request: Accept and Content-Type, GET and DELETE included. */
const WRAPPER_HEADERS = { accept: 'application/json', 'content-type': 'application/json' };
const cookie = (token: string) => ({ cookie: `_cmi_session=${token}` });

describe('ending sessions', () => {
  let t: TestApp;
  let other: Awaited<ReturnType<TestApp['secondProcess']>>;
  let here: string;
  let there: string;
  before(async () => {
    t = await createTestApp();
    other = await t.secondProcess();
    here = `http://127.0.0.1:${await listenLocally(t.app)}`;
    there = `http://127.0.0.1:${await listenLocally(other.app)}`;
  });
  after(async () => {
    await other?.close();
    await t?.close();
  });

  /** A new session of `authorization` (a Basic login answers one), checked to work in both processes. */
  async function sessionOf(authorization: string): Promise<string> {
    const res = await send(here, 'GET', '/version.json', { authorization });
    assert.equal(res.status, 200, res.body);
    const token = SESSION_COOKIE.exec(res.cookies[0] ?? '')?.[1];
    assert.ok(token, `no session cookie: ${JSON.stringify(res.cookies)}`);
    for (const base of [here, there]) assert.equal((await send(base, 'GET', '/version.json', cookie(token))).status, 200);
    return token;
  }

  async function assertEnded(token: string): Promise<void> {
    for (const base of [here, there]) {
      const res = await send(base, 'GET', '/version.json', cookie(token));
      assert.equal(res.status, 401, `${base}: ${res.body}`);
      assert.equal(res.body, ACCESS_DENIED_JSON);
    }
  }

  async function assertWorks(token: string): Promise<void> {
    for (const base of [here, there]) assert.equal((await send(base, 'GET', '/version.json', cookie(token))).status, 200, base);
  }

  async function auditRows(action: string) {
    return t.database.db.selectFrom('audit_events').select(['actor_id', 'actor_login', 'credential', 'action', 'target_type', 'target_id', 'changes']).where('action', '=', action).orderBy('id').execute();
  }

  it('a user ends its own sessions: 204 with no body and no cookie, ended in both processes, its password and API key still work', async () => {
    const key = await send(here, 'POST', `/users/${t.alice.id}/make_new_api_key.json`, { ...WRAPPER_HEADERS, authorization: t.aliceAuth }, '{}');
    assert.equal(key.status, 200, key.body);
    const apiKey = (JSON.parse(key.body) as { user: { api_key: string } }).user.api_key;
    const first = await sessionOf(t.aliceAuth);
    const second = await sessionOf(t.aliceAuth);
    const adminSession = await sessionOf(t.adminAuth);

    const res = await send(here, 'DELETE', `/users/${t.alice.id}/sessions.json`, { ...WRAPPER_HEADERS, authorization: t.aliceAuth });
    assert.equal(res.status, 204, res.body);
    assert.equal(res.body, '');
    assert.deepEqual(res.cookies, []);

    await assertEnded(first);
    await assertEnded(second);
    await assertWorks(adminSession);
    for (const base of [here, there]) {
      assert.equal((await send(base, 'GET', '/version.json', { authorization: t.aliceAuth })).status, 200);
      assert.equal((await send(base, 'GET', '/version.json', { authorization: t.basic('alice@example.com', apiKey) })).status, 200);
    }
    assert.deepEqual(await auditRows('user.sessions.delete'), [
      { actor_id: t.alice.id, actor_login: 'alice', credential: 'password', action: 'user.sessions.delete', target_type: 'user', target_id: t.alice.id, changes: '{}' },
    ]);
  });

  it('through the session cookie, from cmi\'s own origin, and in XML', async () => {
    const token = await sessionOf(t.aliceAuth);
    const res = await send(here, 'DELETE', `/users/${t.alice.id}/sessions.xml`, { ...cookie(token), 'x-requested-with': 'XMLHttpRequest', accept: 'application/xml' });
    assert.equal(res.status, 204, res.body);
    assert.equal(res.body, '');
    assert.deepEqual(res.cookies, []);
    await assertEnded(token);
  });

  it('an administrator ends another user\'s sessions; a user may not end another\'s (403), an unknown user is 404', async () => {
    const aliceSession = await sessionOf(t.aliceAuth);
    const adminSession = await sessionOf(t.adminAuth);
    const refused = await send(here, 'DELETE', `/users/${t.admin.id}/sessions.json`, { ...WRAPPER_HEADERS, authorization: t.aliceAuth });
    assert.equal(refused.status, 403);
    assert.equal(refused.body, '{"errors":{"base":["You are not authorized to perform this action (needs users.update)"]}}');
    await assertWorks(adminSession);

    const missing = await send(here, 'DELETE', '/users/999999/sessions.json', { ...WRAPPER_HEADERS, authorization: t.adminAuth });
    assert.equal(missing.status, 404);
    assert.equal(missing.body, '{"errors":{"base":["Resource not found"]}}');

    const res = await send(here, 'DELETE', `/users/${t.alice.id}/sessions.json`, { ...WRAPPER_HEADERS, authorization: t.adminAuth });
    assert.equal(res.status, 204);
    await assertEnded(aliceSession);
    await assertWorks(adminSession);
  });

  it('drop_all as the PHP wrapper sends it ends every user\'s sessions, the caller\'s own too; only holders of users.update may', async () => {
    const aliceSession = await sessionOf(t.aliceAuth);
    const adminSession = await sessionOf(t.adminAuth);

    const refused = await send(here, 'DELETE', '/users/drop_all.json', { ...WRAPPER_HEADERS, authorization: t.aliceAuth });
    assert.equal(refused.status, 403);
    assert.equal(refused.body, '{"errors":{"base":["You are not authorized to perform this action (needs users.update)"]}}');
    await assertWorks(aliceSession);

    const res = await send(here, 'DELETE', '/users/drop_all.json', { ...WRAPPER_HEADERS, authorization: t.adminAuth });
    assert.equal(res.status, 204, res.body);
    assert.equal(res.body, '');
    assert.deepEqual(res.cookies, []);
    await assertEnded(aliceSession);
    await assertEnded(adminSession);
    assert.equal((await send(there, 'GET', '/version.json', { authorization: t.adminAuth })).status, 200);

    const xml = await send(there, 'DELETE', '/users/drop_all.xml', { accept: 'application/xml', 'content-type': 'application/xml', authorization: t.adminAuth });
    assert.equal(xml.status, 204);
    const users = (await t.database.db.selectFrom('users').select('id').execute()).length;
    assert.deepEqual(await auditRows('user.sessions.delete_all'), [
      { actor_id: t.admin.id, actor_login: 'admin', credential: 'password', action: 'user.sessions.delete_all', target_type: 'user', target_id: null, changes: JSON.stringify({ users }) },
      { actor_id: t.admin.id, actor_login: 'admin', credential: 'password', action: 'user.sessions.delete_all', target_type: 'user', target_id: null, changes: JSON.stringify({ users }) },
    ]);
  });

  it('a session ended leaves the user\'s record as it was (updated_at unchanged)', async () => {
    const before = await send(here, 'GET', `/users/${t.alice.id}.json`, { authorization: t.adminAuth });
    assert.equal((await send(here, 'DELETE', `/users/${t.alice.id}/sessions.json`, { authorization: t.adminAuth })).status, 204);
    const after = await send(here, 'GET', `/users/${t.alice.id}.json`, { authorization: t.adminAuth });
    assert.equal(after.body, before.body);
  });
});
