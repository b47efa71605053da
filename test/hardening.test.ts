import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { KyselyPlugin, QueryResult } from 'kysely';
import { ALICE, createTestApp, type TestApp } from './support/app.js';
import { assertAccessDenied, get, tokenOf, withCookie } from './support/http.js';
import { eventually } from './support/eventually.js';
import { statementGate } from './support/statement-gate.js';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.close());

const as = (authorization: string, url = '/version.json') => get(t.app, url, { authorization });

describe('credentials under concurrency', () => {
  it('lets at most 10 of 30 simultaneous wrong guesses reach the password check; the rest get 429', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => as(t.basic(ALICE.login, `wrong-password-${i}`))));
    const counts = new Map<number, number>();
    for (const answer of answers) counts.set(answer.statusCode, (counts.get(answer.statusCode) ?? 0) + 1);
    // One statement counts the attempt on every counter (docs/security.md#brute-force), and the
    // limit of 10 for one name from one address refuses the rest: never more than 10 checks, never fewer than 1.
    const checked = counts.get(401) ?? 0;
    assert.ok(checked >= 1 && checked <= 10, `${checked} guesses reached the password check`);
    assert.equal(checked + (counts.get(429) ?? 0), 30);
  });

  it('lets at most 10 of 30 simultaneous wrong guesses reach the password check while the database takes longer than the grace to count them', async () => {
    // Every count lands after the lockout's grace (100 ms, src/users/lockout.ts): each attempt is counted in
    // memory first, and the count the database returns later must not add it a second time.
    const slowCounts: KyselyPlugin = {
      transformQuery: ({ node }) => node,
      transformResult: async ({ result }) => {
        if (result.rows.some((row) => typeof row === 'object' && row !== null && 'failures' in row && 'window_started_at' in row)) await new Promise((resolve) => setTimeout(resolve, 150));
        return result;
      },
    };
    const slow = await createTestApp({}, { gate: { attach: (db) => db.withPlugin(slowCounts) } });
    try {
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => get(slow.app, '/version.json', { authorization: slow.basic(ALICE.login, `wrong-password-${i}`) })));
      const statuses = answers.map((answer) => answer.statusCode).join(' ');
      const checked = answers.filter((answer) => answer.statusCode === 401).length;
      assert.ok(checked >= 1 && checked <= 10, statuses);
      assert.equal(answers.filter((answer) => answer.statusCode === 429).length, 30 - checked, statuses);
      // Counted past the limit, so the pair stays locked: every guess that read the counter under it was counted
      // (a refused one's count may be written after its answer), one that read it over was refused uncounted
      // (src/users/lockout.ts: a flood of guesses costs no writes), which a slow machine lets happen.
      await eventually(async () => {
        const pair = await slow.database.db.selectFrom('failed_logins').select('failures').where('account', '=', ALICE.login).where('address', '!=', '').executeTakeFirstOrThrow();
        assert.ok(Number(pair.failures) > 10 && Number(pair.failures) <= 30, `${pair.failures} failures counted`);
      }, 5000);
    } finally {
      await slow.close();
    }
  });

  it('does not cache a verification that began before the user was suspended', async () => {
    const gate = statementGate();
    const g = await createTestApp({}, { gate });
    try {
      assert.equal((await get(g.app, '/version.json', { authorization: g.adminAuth })).statusCode, 200); // the administrator's credentials are cached
      // Alice's check stops right after reading her credentials (she is active), and the administrator suspends her then.
      const readHers = ({ rows }: QueryResult<unknown>) => rows.some((row) => (row as { login?: string }).login === ALICE.login && 'password_hash' in (row as object));
      const pause = gate.pauseAfter(readHers);
      const inFlight = get(g.app, '/version.json', { authorization: g.aliceAuth });
      await pause.reached;
      const suspended = await g.app.inject({ method: 'POST', url: `/users/${g.alice.id}/suspend.json`, headers: { authorization: g.adminAuth } });
      assert.equal(suspended.statusCode, 200, suspended.body);
      pause.release();
      // The check read her as active, so it is answered as her; what it verified is not kept.
      const answered = await inFlight;
      assert.equal(answered.statusCode, 200, answered.body);
      assert.equal(answered.body, '{"version":"6.7"}');
      tokenOf(answered);
      assertAccessDenied(await get(g.app, '/version.json', { authorization: g.aliceAuth }));
    } finally {
      await g.close();
    }
  });
});

describe('API keys', () => {
  it('ends the sessions opened with a key when a new key is made', async () => {
    const made = await t.app.inject({ method: 'POST', url: `/users/${t.alice.id}/make_new_api_key.json`, headers: { authorization: t.aliceAuth } });
    const key = (JSON.parse(made.body) as { user: { api_key: string } }).user.api_key;
    const login = await as(t.basic(ALICE.login, key));
    assert.equal(login.statusCode, 200);
    const session = withCookie(tokenOf(login));
    assert.equal((await get(t.app, '/version.json', session)).statusCode, 200);
    const again = await t.app.inject({ method: 'POST', url: `/users/${t.alice.id}/make_new_api_key.json`, headers: { authorization: t.aliceAuth } });
    assert.equal(again.statusCode, 200);
    assertAccessDenied(await get(t.app, '/version.json', session));
  });
});

describe('names that sign in', () => {
  it('refuses a login that is another user\'s email, and an email that is another user\'s login', async () => {
    const login = await t.app.inject({
      method: 'PUT',
      url: `/users/${t.alice.id}.json`,
      headers: { authorization: t.aliceAuth, 'content-type': 'application/json' },
      payload: JSON.stringify({ user: { login: 'ADMIN@example.com' } }),
    });
    assert.equal(login.statusCode, 422);
    assert.equal(login.body, '{"errors":{"login":["has already been taken"]}}');
    const create = (user: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/users.json',
        headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
        payload: JSON.stringify({ user }),
      });
    assert.equal((await create({ login: 'bob@example.com', email: 'bob@elsewhere.test', password: 'bob-password' })).statusCode, 201);
    const email = await create({ login: 'carol', email: 'BOB@example.com', password: 'carol-password' });
    assert.equal(email.statusCode, 422);
    assert.equal(email.body, '{"errors":{"email":["has already been taken"]}}');
  });
});

describe('XML bodies', () => {
  it('answers a 1 MiB body of unclosed tags at once with 422 (the depth check is linear)', async () => {
    const payload = `<user>${'<a'.repeat(500_000)}`;
    const res = await t.app.inject({
      method: 'PUT',
      url: `/users/${t.alice.id}.xml`,
      headers: { authorization: t.aliceAuth, 'content-type': 'application/xml' },
      payload,
    });
    assert.equal(res.statusCode, 422);
  });
});

describe('HEAD', () => {
  it('answers like GET, with the same ETag and caching headers and no body', async () => {
    const listed = await as(t.adminAuth, '/users.json');
    const head = await t.app.inject({ method: 'HEAD', url: '/users.json', headers: { authorization: t.adminAuth } });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers.etag, listed.headers.etag);
    assert.equal(head.headers['cache-control'], 'max-age=0, private, must-revalidate');
    assert.equal(head.body, '');
  });
});

describe('the last active administrator', () => {
  it('survives two administrators suspending each other at the same moment: one wins, one gets 422', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/users.json',
      headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
      payload: JSON.stringify({ user: { login: 'root2', email: 'root2@example.com', password: 'root2-password', role: 'admin' } }),
    });
    const second = (JSON.parse(created.body) as { user: { id: number } }).user.id;
    const secondAuth = t.basic('root2', 'root2-password');
    assert.equal((await as(secondAuth)).statusCode, 200);
    const suspend = (authorization: string, id: number) =>
      t.app.inject({ method: 'POST', url: `/users/${id}/suspend.json`, headers: { authorization } });
    const answers = await Promise.all([suspend(t.adminAuth, second), suspend(secondAuth, t.admin.id)]);
    assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 422]);
    const active = await t.database.db.selectFrom('users').select('login').where('role', '=', 'admin').where('status', '=', 'active').execute();
    assert.equal(active.length, 1);
  });
});

describe('one client on many connections', () => {
  it('checks credentials sent on 30 connections at once only once: all 200, nothing counted against the limit', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, () => as(t.aliceAuth)));
    assert.deepEqual([...new Set(answers.map((answer) => answer.statusCode))], [200]);
    // Each answer still opens its own session.
    assert.equal(new Set(answers.map((answer) => String(answer.headers['set-cookie']))).size, 30);
    const counted = await t.database.db.selectFrom('failed_logins').select(['account', 'address', 'failures']).where('failures', '>', 0).execute();
    assert.deepEqual(counted, []);
  });
});
