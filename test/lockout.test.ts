import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN, ALICE, createTestApp, type TestApp } from './support/app.js';
import { assertAccessDenied } from './support/http.js';

const TOO_MANY_JSON = '{"errors":{"base":["Too many requests, try again later"]}}';
const TOO_MANY_XML = '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Too many requests, try again later</error>\n</errors>\n';
const WINDOW_START = '2026-11-20T10:00:00.000Z';

function attempt(t: TestApp, login: string, password: string, address = '127.0.0.1', url = '/version.json'): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url, headers: { authorization: t.basic(login, password) }, remoteAddress: address });
}

function assertLocked(res: LightMyRequestResponse, retryAfter: number): void {
  assert.equal(res.statusCode, 429, res.body);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(res.headers['cache-control'], 'no-cache');
  assert.equal(res.headers['retry-after'], String(retryAfter));
  assert.equal(res.body, TOO_MANY_JSON);
  assert.equal(res.headers['set-cookie'], undefined);
}

function assertAllowed(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 200, res.body);
}

async function failures(t: TestApp): Promise<Array<{ key: string; failures: number; window_started_at: string }>> {
  const rows = await t.database.db.selectFrom('login_failures').selectAll().orderBy('key').execute();
  return rows.map((row) => ({ key: row.key, failures: Number(row.failures), window_started_at: row.window_started_at }));
}

describe('lockout with the defaults (10 failures in 900 s)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('after 10 wrong passwords answers 429 with Retry-After until the window ends, even to the right password', async () => {
    for (let i = 1; i <= 10; i++) {
      assertAccessDenied(await attempt(t, ALICE.login, `wrong-password-${i}`));
      if (i < 10) t.time.advance(10);
    }
    // 90 s into the window that began with the first failure.
    assertLocked(await attempt(t, ALICE.login, 'wrong-password-11'), 810);
    assertLocked(await attempt(t, ALICE.login, ALICE.password), 810);
    // Attempts are counted before their password is checked; one refused while already locked is not.
    assert.deepEqual(await failures(t), [
      { key: 'address:127.0.0.1', failures: 10, window_started_at: WINDOW_START },
      { key: 'user:2', failures: 10, window_started_at: WINDOW_START },
    ]);

    t.time.advance(300);
    assertLocked(await attempt(t, ALICE.login, ALICE.password), 510);
    const xml = await attempt(t, ALICE.login, ALICE.password, '127.0.0.1', '/version.xml');
    assert.equal(xml.statusCode, 429);
    assert.equal(xml.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(xml.headers['retry-after'], '510');
    assert.equal(xml.body, TOO_MANY_XML);

    t.time.advance(509);
    assertLocked(await attempt(t, ALICE.login, ALICE.password), 1);
    t.time.advance(1);
    assertAllowed(await attempt(t, ALICE.login, ALICE.password));
  });

  it('nine wrong passwords do not lock: the tenth attempt may still be the right one', async () => {
    for (let i = 1; i <= 9; i++) assertAccessDenied(await attempt(t, ALICE.login, `wrong-password-${i}`));
    assertAllowed(await attempt(t, ALICE.login, ALICE.password));
  });

  it('locks every endpoint, not only /version', async () => {
    for (let i = 1; i <= 10; i++) assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password'));
    assertLocked(await attempt(t, ALICE.login, ALICE.password, '127.0.0.1', '/users.json'), 900);
    assertLocked(await attempt(t, ALICE.login, ALICE.password, '127.0.0.1', '/users/2.json'), 900);
  });

  it('answers the right password 429 while locked even when it was verified moments before', async () => {
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '192.0.2.1'));
    for (let i = 1; i <= 10; i++) assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', `198.51.100.${i}`));
    assertLocked(await attempt(t, ALICE.login, ALICE.password, '192.0.2.1'), 900);
  });
});

describe('lockout with CMI_LOCKOUT_MAX_FAILURES=3', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '3' });
  });
  afterEach(() => t.close());

  it('locks an address after failures for different logins, and only that address', async () => {
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.7'));
    assertAccessDenied(await attempt(t, ADMIN.login, 'wrong-password', '203.0.113.7'));
    assertAccessDenied(await attempt(t, 'nobody', 'wrong-password', '203.0.113.7'));
    assertLocked(await attempt(t, ALICE.login, ALICE.password, '203.0.113.7'), 900);
    assertLocked(await attempt(t, ADMIN.login, ADMIN.password, '203.0.113.7'), 900);
    // The same logins from another address are fine (one failure each is under the limit).
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '198.51.100.1'));
    assertAllowed(await attempt(t, ADMIN.login, ADMIN.password, '198.51.100.1'));
    // Successes clear their account and give their address its attempt back.
    assert.deepEqual(await failures(t), [
      { key: 'address:198.51.100.1', failures: 0, window_started_at: WINDOW_START },
      { key: 'address:203.0.113.7', failures: 3, window_started_at: WINDOW_START },
      { key: 'login:nobody', failures: 1, window_started_at: WINDOW_START },
    ]);
  });

  it('locks a login after failures from different addresses, from every address', async () => {
    for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', address));
    assertLocked(await attempt(t, ALICE.login, ALICE.password, '198.51.100.9'), 900);
    // That address itself is not locked: another login from it works.
    assertAllowed(await attempt(t, ADMIN.login, ADMIN.password, '198.51.100.9'));
  });

  it('counts an unknown login the same as a known one, with the same 401', async () => {
    const known = await attempt(t, ALICE.login, 'wrong-password', '203.0.113.1');
    const unknown = await attempt(t, 'nobody', 'wrong-password', '203.0.113.1');
    assertAccessDenied(unknown);
    assert.equal(unknown.body, known.body);
    assert.equal(unknown.headers['www-authenticate'], known.headers['www-authenticate']);
    assertAccessDenied(await attempt(t, 'nobody', 'wrong-password', '203.0.113.2'));
    assertAccessDenied(await attempt(t, 'nobody', 'wrong-password', '203.0.113.3'));
    assertLocked(await attempt(t, 'nobody', 'wrong-password', '203.0.113.4'), 900);
    assert.deepEqual(await failures(t), [
      { key: 'address:203.0.113.1', failures: 2, window_started_at: WINDOW_START },
      { key: 'address:203.0.113.2', failures: 1, window_started_at: WINDOW_START },
      { key: 'address:203.0.113.3', failures: 1, window_started_at: WINDOW_START },
      { key: 'login:nobody', failures: 3, window_started_at: WINDOW_START },
      { key: 'user:2', failures: 1, window_started_at: WINDOW_START },
    ]);
  });

  it('a successful login clears the login\'s counter, not the addresses\'', async () => {
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.1'));
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.2'));
    assert.deepEqual(await failures(t), [
      { key: 'address:203.0.113.1', failures: 1, window_started_at: WINDOW_START },
      { key: 'address:203.0.113.2', failures: 1, window_started_at: WINDOW_START },
      { key: 'user:2', failures: 2, window_started_at: WINDOW_START },
    ]);
    t.time.advance(60);
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '203.0.113.3'));
    assert.deepEqual(await failures(t), [
      { key: 'address:203.0.113.1', failures: 1, window_started_at: WINDOW_START },
      { key: 'address:203.0.113.2', failures: 1, window_started_at: WINDOW_START },
      { key: 'address:203.0.113.3', failures: 0, window_started_at: '2026-11-20T10:01:00.000Z' },
    ]);
    // Counting starts over: three more failures before the login locks, in a window from the first of them.
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.4'));
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.5'));
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.6'));
    assertLocked(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.7'), 900);
    const alice = (await failures(t)).find((row) => row.key === 'user:2');
    assert.deepEqual(alice, { key: 'user:2', failures: 3, window_started_at: '2026-11-20T10:01:00.000Z' });
  });

  it('starts a new window after the old one passes', async () => {
    for (let i = 0; i < 3; i++) assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password'));
    assertLocked(await attempt(t, ALICE.login, 'wrong-password'), 900);
    t.time.advance(900);
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password'));
    assert.deepEqual(await failures(t), [
      { key: 'address:127.0.0.1', failures: 1, window_started_at: '2026-11-20T10:15:00.000Z' },
      { key: 'user:2', failures: 1, window_started_at: '2026-11-20T10:15:00.000Z' },
    ]);
  });

  it('counts a wrong API key like a wrong password', async () => {
    const made = await t.app.inject({ method: 'POST', url: '/users/2/make_new_api_key.json', headers: { authorization: t.adminAuth } });
    const key = (JSON.parse(made.body) as { user: { api_key: string } }).user.api_key;
    for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) assertAccessDenied(await attempt(t, ALICE.login, '0'.repeat(64), address));
    assertLocked(await attempt(t, ALICE.login, key, '198.51.100.1'), 900);
  });

  it('counts failures by login and by email against the one account', async () => {
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.1'));
    assertAccessDenied(await attempt(t, ALICE.email, 'wrong-password', '203.0.113.2'));
    assertAccessDenied(await attempt(t, ALICE.email.toUpperCase(), 'wrong-password', '203.0.113.3'));
    assertLocked(await attempt(t, ALICE.login, ALICE.password, '198.51.100.1'), 900);
  });
});

describe('lockout with CMI_LOCKOUT_WINDOW', () => {
  it('Retry-After counts down to the end of the configured window', async () => {
    const t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '2', CMI_LOCKOUT_WINDOW: '60' });
    try {
      assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password'));
      t.time.advance(15);
      assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password'));
      assertLocked(await attempt(t, ALICE.login, ALICE.password), 45);
      t.time.advance(44.5);
      assertLocked(await attempt(t, ALICE.login, ALICE.password), 1);
      t.time.advance(0.5);
      assertAllowed(await attempt(t, ALICE.login, ALICE.password));
    } finally {
      await t.close();
    }
  });
});
