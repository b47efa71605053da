import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { ALICE, createTestApp, type TestApp } from './support/app.js';
import { assertAccessDenied, CLEARED_COOKIE, get, login, tokenOf, withCookie } from './support/http.js';

async function assertSessionWorks(app: FastifyInstance, token: string): Promise<LightMyRequestResponse> {
  const res = await get(app, '/version.json', withCookie(token));
  assert.equal(res.statusCode, 200, `session refused: ${res.body}`);
  return res;
}

async function assertSessionEnded(app: FastifyInstance, token: string): Promise<void> {
  assertAccessDenied(await get(app, '/version.json', withCookie(token)));
}

function logout(app: FastifyInstance, token: string, url = '/session.json'): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'DELETE', url, headers: { ...withCookie(token), 'content-type': 'application/json', accept: 'application/json' } });
}

describe('session idle timeout (CMI_SESSION_IDLE_TIMEOUT, default 1800 s)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('ends a session unused for longer than 1800 s', async () => {
    const token = await login(t.app, t.aliceAuth);
    t.time.advance(1801);
    await assertSessionEnded(t.app, token);
  });

  it('keeps a session used within 1800 s', async () => {
    const token = await login(t.app, t.aliceAuth);
    t.time.advance(1799);
    await assertSessionWorks(t.app, token);
  });

  it('counts from the last refresh: a session in use outlives the idle timeout, its stale cookie does not', async () => {
    const first = await login(t.app, t.aliceAuth);
    t.time.advance(1000);
    const refreshed = tokenOf(await assertSessionWorks(t.app, first));
    t.time.advance(1000);
    // 2000 s after login, 1000 s after the refresh.
    await assertSessionWorks(t.app, refreshed);
    await assertSessionEnded(t.app, first);
  });

  it('follows CMI_SESSION_IDLE_TIMEOUT', async () => {
    const short = await createTestApp({ CMI_SESSION_IDLE_TIMEOUT: '300' });
    try {
      const kept = await login(short.app, short.aliceAuth);
      const ended = await login(short.app, short.aliceAuth);
      short.time.advance(299);
      await assertSessionWorks(short.app, kept);
      short.time.advance(2);
      await assertSessionEnded(short.app, ended);
    } finally {
      await short.close();
    }
  });
});

describe('session absolute timeout (CMI_SESSION_MAX_AGE, default 43200 s)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('ends a session 43200 s after login even when it is used all the time, and a new login works', async () => {
    let token = await login(t.app, t.aliceAuth);
    let elapsed = 0;
    while (elapsed + 1500 <= 43_200) {
      t.time.advance(1500);
      elapsed += 1500;
      token = tokenOf(await assertSessionWorks(t.app, token));
    }
    t.time.advance(43_200 - elapsed + 1);
    await assertSessionEnded(t.app, token);
    await assertSessionWorks(t.app, await login(t.app, t.aliceAuth));
  });
});

describe('session cookie refresh', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('sends no new cookie while the last-seen time is under 60 s old, then a new one for the same session', async () => {
    const token = await login(t.app, t.aliceAuth);
    t.time.advance(59);
    const early = await assertSessionWorks(t.app, token);
    assert.equal(early.headers['set-cookie'], undefined);

    t.time.advance(1);
    const due = await assertSessionWorks(t.app, token);
    const refreshed = tokenOf(due);
    assert.notEqual(refreshed, token);

    // The refreshed cookie counts from now: no new cookie for the next 59 s.
    t.time.advance(59);
    assert.equal((await assertSessionWorks(t.app, refreshed)).headers['set-cookie'], undefined);

    // It is the same session: logging out with the new cookie ends the old one too.
    const res = await logout(t.app, refreshed);
    assert.equal(res.statusCode, 204);
    await assertSessionEnded(t.app, refreshed);
    await assertSessionEnded(t.app, token);
  });

  it('refreshes on any endpoint the session is used on', async () => {
    const token = await login(t.app, t.aliceAuth);
    t.time.advance(61);
    const res = await get(t.app, '/users.json', withCookie(token));
    assert.equal(res.statusCode, 200);
    await assertSessionWorks(t.app, tokenOf(res));
  });
});

describe('DELETE /session (logout)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('ends only the current session: 204, no body, the cookie cleared with Max-Age=0', async () => {
    const ending = await login(t.app, t.aliceAuth);
    t.time.advance(10);
    const other = await login(t.app, t.aliceAuth);
    const res = await logout(t.app, ending);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers['set-cookie'], CLEARED_COOKIE);

    await assertSessionEnded(t.app, ending);
    await assertSessionWorks(t.app, other);
    // Still ended after the verification cache's TTL (5 s), and long after.
    t.time.advance(6);
    await assertSessionEnded(t.app, ending);
    await assertSessionWorks(t.app, other);
    t.time.advance(600);
    await assertSessionEnded(t.app, ending);
    // The password still logs in.
    await assertSessionWorks(t.app, await login(t.app, t.aliceAuth));
  });

  it('ends only the current session also when the other one was opened in the same moment (two clients logging in together)', async () => {
    const ending = await login(t.app, t.aliceAuth);
    const other = await login(t.app, t.aliceAuth);
    assert.notEqual(other, ending, 'two logins were answered with the same session');
    assert.equal((await logout(t.app, ending)).statusCode, 204);
    await assertSessionEnded(t.app, ending);
    await assertSessionWorks(t.app, other);
  });

  it('answers on an .xml path too', async () => {
    const token = await login(t.app, t.aliceAuth);
    const res = await logout(t.app, token, '/session.xml');
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers['set-cookie'], CLEARED_COOKIE);
    await assertSessionEnded(t.app, token);
  });

  it('with Basic credentials only, clears the cookie and ends no session', async () => {
    const token = await login(t.app, t.aliceAuth);
    const res = await t.app.inject({ method: 'DELETE', url: '/session.json', headers: { authorization: t.aliceAuth } });
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['set-cookie'], CLEARED_COOKIE);
    await assertSessionWorks(t.app, token);
  });

  it('with an ended session is refused 401', async () => {
    const token = await login(t.app, t.aliceAuth);
    assert.equal((await logout(t.app, token)).statusCode, 204);
    assertAccessDenied(await logout(t.app, token));
  });

  it('does not touch other users\' sessions', async () => {
    const alice = await login(t.app, t.aliceAuth);
    const admin = await login(t.app, t.adminAuth);
    assert.equal((await logout(t.app, alice)).statusCode, 204);
    await assertSessionWorks(t.app, admin);
  });
});

describe('credential and status changes through the API end all of the user\'s sessions at once', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const put = (url: string, authorization: string, body: unknown) =>
    t.app.inject({ method: 'PUT', url, headers: { authorization, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const post = (url: string) => t.app.inject({ method: 'POST', url, headers: { authorization: t.adminAuth } });

  it('a password change by an administrator', async () => {
    const one = await login(t.app, t.aliceAuth);
    const two = await login(t.app, t.basic(ALICE.email, ALICE.password));
    const admin = await login(t.app, t.adminAuth);
    assert.equal((await put('/users/2.json', t.adminAuth, { user: { password: 'alice-new-password' } })).statusCode, 204);
    await assertSessionEnded(t.app, one);
    await assertSessionEnded(t.app, two);
    await assertSessionWorks(t.app, admin);
    await assertSessionWorks(t.app, await login(t.app, t.basic(ALICE.login, 'alice-new-password')));
  });

  it('a password change by the user itself, through one of its sessions', async () => {
    const one = await login(t.app, t.aliceAuth);
    const two = await login(t.app, t.basic(ALICE.email, ALICE.password));
    const res = await t.app.inject({
      method: 'PUT',
      url: '/users/2.json',
      headers: { ...withCookie(one), 'content-type': 'application/json' },
      payload: JSON.stringify({ password: 'alice-new-password', current_password: ALICE.password }),
    });
    assert.equal(res.statusCode, 204);
    await assertSessionEnded(t.app, one);
    await assertSessionEnded(t.app, two);
  });

  it('not a change of other fields', async () => {
    const one = await login(t.app, t.aliceAuth);
    assert.equal((await put('/users/2.json', t.adminAuth, { user: { first_name: 'Alicia' } })).statusCode, 204);
    await assertSessionWorks(t.app, one);
  });

  it('a suspension; activation does not bring the old sessions back', async () => {
    const one = await login(t.app, t.aliceAuth);
    const two = await login(t.app, t.basic(ALICE.email, ALICE.password));
    assert.equal((await post('/users/2/suspend.json')).statusCode, 200);
    await assertSessionEnded(t.app, one);
    await assertSessionEnded(t.app, two);
    assert.equal((await post('/users/2/activate.json')).statusCode, 200);
    await assertSessionEnded(t.app, one);
    await assertSessionWorks(t.app, await login(t.app, t.aliceAuth));
  });

  it('a deletion', async () => {
    const one = await login(t.app, t.aliceAuth);
    const two = await login(t.app, t.basic(ALICE.email, ALICE.password));
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/users/2.json',
      headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
      payload: '{"force":1}',
    });
    assert.equal(res.statusCode, 204);
    await assertSessionEnded(t.app, one);
    await assertSessionEnded(t.app, two);
  });

  it('another process sees a password change within CMI_AUTH_CACHE_TTL (5 s), even one that verified both credentials just before', async () => {
    const other = await t.secondProcess();
    try {
      const session = await login(other.app, t.aliceAuth);
      await assertSessionWorks(other.app, session);
      assert.equal((await put('/users/2.json', t.adminAuth, { password: 'alice-new-password' })).statusCode, 204);
      t.time.advance(5);
      await assertSessionEnded(other.app, session);
      assertAccessDenied(await get(other.app, '/version.json', { authorization: t.aliceAuth }));
      await login(other.app, t.basic(ALICE.login, 'alice-new-password'));
    } finally {
      await other.close();
    }
  });
});

// One session's end (docs/security.md#sessions-without-storage): at once in the process that made
// it, within CMI_AUTH_CACHE_TTL (5 s) in the others. The clock stands still unless a test moves it.
describe('a logout as seen by each process', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('is seen at once by the process that made it, though that process had just verified the session', async () => {
    const token = await login(t.app, t.aliceAuth);
    await assertSessionWorks(t.app, token);
    assert.equal((await logout(t.app, token)).statusCode, 204);
    await assertSessionEnded(t.app, token);
  });

  it('is seen by another process (its own connection and cache) within CMI_AUTH_CACHE_TTL, at once by one that had not verified the session', async () => {
    const verified = await t.secondProcess();
    const fresh = await t.secondProcess();
    try {
      const token = await login(t.app, t.aliceAuth);
      await assertSessionWorks(verified.app, token);
      assert.equal((await logout(t.app, token)).statusCode, 204);
      await assertSessionEnded(t.app, token);
      await assertSessionEnded(fresh.app, token);
      t.time.advance(5);
      await assertSessionEnded(verified.app, token);
    } finally {
      await verified.close();
      await fresh.close();
    }
  });
});

describe('a tampered session token', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await createTestApp();
    token = await login(t.app, t.aliceAuth);
  });
  after(() => t.close());

  /** userId.epoch.sessionId.issuedAt.lastSeen.mac */
  const part = (index: number, change: (value: string) => string) => {
    const parts = token.split('.');
    parts[index] = change(parts[index] as string);
    return parts.join('.');
  };
  const flip = (text: string) => `${text.slice(0, -1)}${text.at(-1) === 'A' ? 'B' : 'A'}`;

  const cases: Array<[name: string, make: () => string]> = [
    ['a changed signature', () => part(5, flip)],
    ['another user id', () => part(0, () => '1')],
    ['another epoch', () => part(1, (epoch) => String(Number(epoch) + 1))],
    ['another session id', () => part(2, flip)],
    ['an earlier login time (to escape the absolute timeout)', () => part(3, (at) => String(Number(at) - 100))],
    ['a later last-seen time (to escape the idle timeout)', () => part(4, (at) => String(Number(at) + 1000))],
    ['the signature cut short', () => token.slice(0, -1)],
    ['an extra part', () => `${token}.x`],
    ['no signature', () => token.split('.').slice(0, 5).join('.')],
  ];
  for (const [name, make] of cases) {
    it(`is refused with ${name}`, async () => {
      await assertSessionEnded(t.app, make());
    });
  }

  it('the genuine token still works', async () => {
    await assertSessionWorks(t.app, token);
  });

  it('is refused when a later last-seen is forged after the idle timeout', async () => {
    t.time.advance(1801);
    await assertSessionEnded(t.app, part(4, (at) => String(Number(at) + 1801)));
    await assertSessionEnded(t.app, token);
  });
});
