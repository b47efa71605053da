import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN, ALICE, createTestApp, type TestApp } from './support/app.js';
import { runCmi } from './support/cli.js';
import { assertAccessDenied, tokenOf } from './support/http.js';

// The model these tests hold: docs/security.md#brute-force.

/** What a 429 of the lockout says (docs/security.md#brute-force): the name's lock and how it ends, the address's. */
const nameLocked = (name: string, until: string) =>
  `Too many failed logins for "${name}": it is locked until ${until}, or until an administrator runs: cmi local users unlock ${name}`;
const addressLocked = (until: string) => `Too many failed logins from this address: it is refused until ${until}`;
/** When a lock ends, by the test clock and Retry-After (rounded up to a second: the window's end, to the second). */
const untilOf = (t: TestApp, retryAfter: number) => new Date(Math.floor((t.time.clock().getTime() + retryAfter * 1000) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
const WINDOW_START = '2026-11-20T10:00:00.000Z';

function attempt(t: TestApp, login: string, password: string, address = '127.0.0.1', url = '/version.json'): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url, headers: { authorization: t.basic(login, password) }, remoteAddress: address });
}

/**
 * 429 with Retry-After and the lockout's message: for `name` (the login or email as typed), locked
 * until Retry-After ends; with `address`, for the address too (or alone, `name` undefined).
 */
function assertLocked(t: TestApp, res: LightMyRequestResponse, retryAfter: number, name: string | undefined, address = false): void {
  assert.equal(res.statusCode, 429, res.body);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(res.headers['cache-control'], 'no-cache');
  assert.equal(res.headers['retry-after'], String(retryAfter));
  const until = untilOf(t, retryAfter);
  const base = [...(name === undefined ? [] : [nameLocked(name, until)]), ...(address ? [addressLocked(until)] : [])];
  assert.equal(res.body, JSON.stringify({ errors: { base } }));
  assert.equal(res.headers['set-cookie'], undefined);
}

/** 200 with the version and a new session cookie: a login. */
function assertAllowed(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.body, '{"version":"6.7"}');
  tokenOf(res);
}

/** Code-point order, the same whatever the database's collation. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

type Counter = { account: string; address: string; failures: number; window_started_at: string };

/** Every counter: `account` '' is an address's, `address` '' an account name's, both set a name's from one address. */
async function failures(t: TestApp): Promise<Counter[]> {
  const rows = await t.database.db.selectFrom('failed_logins').selectAll().execute();
  return rows
    .map((row) => ({ account: row.account, address: row.address, failures: Number(row.failures), window_started_at: row.window_started_at }))
    .sort((a, b) => byText(a.account, b.account) || byText(a.address, b.address));
}

const counter = (account: string, address: string, count: number, windowStartedAt = WINDOW_START): Counter => ({
  account,
  address,
  failures: count,
  window_started_at: windowStartedAt,
});

async function knownAddresses(t: TestApp): Promise<Array<{ user_id: number; address: string }>> {
  const rows = await t.database.db.selectFrom('login_addresses').select(['user_id', 'address']).execute();
  return rows.map((row) => ({ user_id: Number(row.user_id), address: row.address })).sort((a, b) => a.user_id - b.user_id || byText(a.address, b.address));
}

async function apiKeyOf(t: TestApp, userId: number): Promise<string> {
  const made = await t.app.inject({ method: 'POST', url: `/users/${userId}/make_new_api_key.json`, headers: { authorization: t.adminAuth }, remoteAddress: '192.0.2.250' });
  assert.equal(made.statusCode, 200, made.body);
  return (JSON.parse(made.body) as { user: { api_key: string } }).user.api_key;
}

describe('lockout with the defaults (10 failures a name from one address in 900 s)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('after 10 wrong passwords answers that address 429 with Retry-After until the window ends, even to the right password', async () => {
    for (let i = 1; i <= 10; i++) {
      assertAccessDenied(await attempt(t, ALICE.login, `wrong-password-${i}`));
      if (i < 10) t.time.advance(10);
    }
    // 90 s into the window that began with the first failure.
    assertLocked(t, await attempt(t, ALICE.login, 'wrong-password-11'), 810, ALICE.login);
    assertLocked(t, await attempt(t, ALICE.login, ALICE.password), 810, ALICE.login);
    // Attempts are counted before their password is checked; one refused while already locked is not.
    assert.deepEqual(await failures(t), [counter('', '127.0.0.1', 10), counter('alice', '', 10), counter('alice', '127.0.0.1', 10)]);

    t.time.advance(300);
    assertLocked(t, await attempt(t, ALICE.login, ALICE.password), 510, ALICE.login);
    const xml = await attempt(t, ALICE.login, ALICE.password, '127.0.0.1', '/version.xml');
    assert.equal(xml.statusCode, 429);
    assert.equal(xml.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(xml.headers['retry-after'], '510');
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>${nameLocked('alice', '2026-11-20T10:15:00Z')}</error>\n</errors>\n`);

    t.time.advance(509);
    assertLocked(t, await attempt(t, ALICE.login, ALICE.password), 1, ALICE.login);
    t.time.advance(1);
    assertAllowed(await attempt(t, ALICE.login, ALICE.password));
  });

  it('nine wrong passwords do not lock: the tenth attempt may still be the right one', async () => {
    for (let i = 1; i <= 9; i++) assertAccessDenied(await attempt(t, ALICE.login, `wrong-password-${i}`));
    assertAllowed(await attempt(t, ALICE.login, ALICE.password));
  });

  it('locks every endpoint, not only /version', async () => {
    for (let i = 1; i <= 10; i++) assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password'));
    assertLocked(t, await attempt(t, ALICE.login, ALICE.password, '127.0.0.1', '/users.json'), 900, ALICE.login);
    assertLocked(t, await attempt(t, ALICE.login, ALICE.password, '127.0.0.1', '/users/2.json'), 900, ALICE.login);
  });

  it('strangers never lock the administrator out: its password from another address, its email and its API key work', async () => {
    const key = await apiKeyOf(t, t.admin.id);
    // Guessing from one address, window after window ("ten more every 15 minutes").
    for (let window = 0; window < 3; window++) {
      for (let i = 1; i <= 12; i++) {
        const guess = await attempt(t, ADMIN.login, `guess-${window}-${i}`, '203.0.113.66');
        if (i <= 10) assertAccessDenied(guess);
        else assertLocked(t, guess, 900, ADMIN.login);
      }
      assertLocked(t, await attempt(t, ADMIN.login, ADMIN.password, '203.0.113.66'), 900, ADMIN.login);
      // The administrator, from its own address (never used before), by login and by email.
      assertAllowed(await attempt(t, ADMIN.login, ADMIN.password, `198.51.100.${window + 1}`));
      assertAllowed(await attempt(t, ADMIN.email, ADMIN.password, `198.51.100.${window + 1}`));
      // Its API key, even from the guessing address.
      assertAllowed(await attempt(t, ADMIN.login, key, '203.0.113.66'));
      assertAllowed(await attempt(t, ADMIN.email, key, '203.0.113.66'));
      t.time.advance(900);
    }
  });

  it('answers the right password 429 from a locked address even while another address has it verified and cached', async () => {
    for (let i = 1; i <= 10; i++) assertAccessDenied(await attempt(t, ALICE.login, `wrong-password-${i}`, '198.51.100.7'));
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '192.0.2.1'));
    // A locked guesser learns nothing from the cache: its right guess is refused like a wrong one...
    assertLocked(t, await attempt(t, ALICE.login, ALICE.password, '198.51.100.7'), 900, ALICE.login);
    assertLocked(t, await attempt(t, ALICE.login, 'wrong-password-11', '198.51.100.7'), 900, ALICE.login);
    // ... while alice goes on from her address.
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '192.0.2.1'));
  });

  it('counts an unknown login exactly like a known one: ghost and alice answer alike, in any case, so the 429 tells nothing', async () => {
    for (const name of ['ghost', ALICE.login]) {
      for (let i = 1; i <= 10; i++) assertAccessDenied(await attempt(t, name, `wrong-password-${i}`, '203.0.113.9'));
    }
    const answers = async (name: string, address: string) => {
      const res = await attempt(t, name, 'wrong-password-x', address);
      return { status: res.statusCode, retryAfter: res.headers['retry-after'], body: res.body, challenge: res.headers['www-authenticate'] };
    };
    // From the guessing address: the name in any case is refused, known or not, in the same words
    // (the name as typed is all that differs).
    for (const [known, unknown] of [['alice', 'ghost'], ['ALICE', 'GHOST'], ['Alice', 'Ghost']] as const) {
      const ofUnknown = await answers(unknown, '203.0.113.9');
      assert.deepEqual(await answers(known, '203.0.113.9'), { ...ofUnknown, body: ofUnknown.body.replaceAll(unknown, known) });
      assertLocked(t, await attempt(t, known, 'wrong-password-x', '203.0.113.9'), 900, known);
    }
    // From elsewhere: a plain 401 for both.
    assert.deepEqual(await answers('ALICE', '203.0.113.10'), await answers('GHOST', '203.0.113.10'));
    assertAccessDenied(await attempt(t, 'ALICE', 'wrong-password-x', '203.0.113.10'));
    assert.deepEqual(await failures(t), [
      counter('', '203.0.113.10', 3),
      counter('', '203.0.113.9', 20),
      counter('alice', '', 12),
      counter('alice', '203.0.113.10', 2),
      counter('alice', '203.0.113.9', 10),
      counter('ghost', '', 11),
      counter('ghost', '203.0.113.10', 1),
      counter('ghost', '203.0.113.9', 10),
    ]);
  });

  it('never refuses the right API key, and does not count it; a wrong key counts like a wrong password', async () => {
    const key = await apiKeyOf(t, t.alice.id);
    for (let i = 1; i <= 10; i++) assertAccessDenied(await attempt(t, ALICE.login, '0'.repeat(64)));
    assertLocked(t, await attempt(t, ALICE.login, ALICE.password), 900, ALICE.login);
    assertAllowed(await attempt(t, ALICE.login, key));
    assertAllowed(await attempt(t, ALICE.email.toUpperCase(), key));
    // The administrator's login that made the key left its zeroed counters.
    assert.deepEqual(await failures(t), [
      counter('', '127.0.0.1', 10),
      counter('', '192.0.2.250', 0),
      counter('admin', '', 0),
      counter('alice', '', 10),
      counter('alice', '127.0.0.1', 10),
    ]);
    // A key that logged in makes its address known, as a password would.
    assert.deepEqual(await knownAddresses(t), [{ user_id: 1, address: '192.0.2.250' }, { user_id: 2, address: '127.0.0.1' }]);
  });
});

describe('lockout with CMI_LOCKOUT_MAX_FAILURES=3', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '3' });
  });
  afterEach(() => t.close());

  it('a successful login clears its name\'s counter from its address and gives back its attempt, nothing more', async () => {
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.1'));
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.3'));
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.3'));
    t.time.advance(60);
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '203.0.113.3'));
    assert.deepEqual(await failures(t), [
      counter('', '203.0.113.1', 1),
      counter('', '203.0.113.3', 2),
      counter('alice', '', 3),
      counter('alice', '203.0.113.1', 1),
    ]);
    // Counting starts over there: three more failures before that address is refused, in a window from the first of them.
    for (let i = 0; i < 3; i++) assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.3'));
    assertLocked(t, await attempt(t, ALICE.login, 'wrong-password', '203.0.113.3'), 900, ALICE.login);
    const pair = (await failures(t)).find((row) => row.account === 'alice' && row.address === '203.0.113.3');
    assert.deepEqual(pair, counter('alice', '203.0.113.3', 3, '2026-11-20T10:01:00.000Z'));
  });

  it('starts a new window after the old one passes', async () => {
    for (let i = 0; i < 3; i++) assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password'));
    assertLocked(t, await attempt(t, ALICE.login, 'wrong-password'), 900, ALICE.login);
    t.time.advance(900);
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password'));
    const next = '2026-11-20T10:15:00.000Z';
    assert.deepEqual(await failures(t), [counter('', '127.0.0.1', 1, next), counter('alice', '', 1, next), counter('alice', '127.0.0.1', 1, next)]);
  });

  it('counts a name in any case as one; a login and an email are two names', async () => {
    assertAccessDenied(await attempt(t, ALICE.email, 'wrong-password'));
    assertAccessDenied(await attempt(t, ALICE.email.toUpperCase(), 'wrong-password'));
    assertAccessDenied(await attempt(t, 'Alice@Example.com', 'wrong-password'));
    assertLocked(t, await attempt(t, ALICE.email, ALICE.password), 900, ALICE.email);
    assertAllowed(await attempt(t, ALICE.login, ALICE.password));
  });
});

describe('lockout of an address across names (CMI_LOCKOUT_ADDRESS_MAX_FAILURES=3)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ CMI_LOCKOUT_ADDRESS_MAX_FAILURES: '3' });
  });
  afterEach(() => t.close());

  it('refuses the address for every account that has not logged in from it, and only that address', async () => {
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '203.0.113.7'));
    assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.7'));
    assertAccessDenied(await attempt(t, ADMIN.login, 'wrong-password', '203.0.113.7'));
    assertAccessDenied(await attempt(t, 'nobody', 'wrong-password', '203.0.113.7'));
    assertLocked(t, await attempt(t, ADMIN.login, ADMIN.password, '203.0.113.7'), 900, undefined, true);
    assertLocked(t, await attempt(t, 'somebody', 'wrong-password', '203.0.113.7'), 900, undefined, true);
    // alice has logged in from there: the address's counter does not refuse her (her verification,
    // cached for that address, was not dropped by her own typo or by the others' guesses).
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '203.0.113.7'));
    // The same logins from another address are fine.
    assertAllowed(await attempt(t, ADMIN.login, ADMIN.password, '198.51.100.1'));
    assert.deepEqual(await failures(t), [
      counter('', '198.51.100.1', 0),
      counter('', '203.0.113.7', 3),
      counter('admin', '', 1),
      counter('admin', '203.0.113.7', 1),
      counter('alice', '', 1),
      counter('alice', '203.0.113.7', 1),
      counter('nobody', '', 1),
      counter('nobody', '203.0.113.7', 1),
    ]);
  });
});

describe('distributed guessing against one account (CMI_LOCKOUT_ACCOUNT_MAX_FAILURES=5)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ CMI_LOCKOUT_ACCOUNT_MAX_FAILURES: '5' });
  });
  afterEach(() => t.close());

  it('refuses new addresses, not one the account has logged in from before', async () => {
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '192.0.2.1'));
    t.time.advance(5);
    for (let i = 1; i <= 5; i++) assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', `198.51.100.${i}`));
    // Any address alice never logged in from, with the right password too (her counter's window began with her login).
    assertLocked(t, await attempt(t, ALICE.login, ALICE.password, '198.51.100.6'), 895, ALICE.login);
    assertLocked(t, await attempt(t, ALICE.login, 'wrong-password', '198.51.100.7'), 895, ALICE.login);
    assertLocked(t, await attempt(t, 'ALICE', ALICE.password, '198.51.100.8'), 895, 'ALICE');
    // Her own address: right in, and a typo there is a plain 401.
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '192.0.2.1'));
    assertAccessDenied(await attempt(t, ALICE.login, 'typo-password', '192.0.2.1'));
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '192.0.2.1'));
    // An unknown name is refused the same way after the same guessing.
    for (let i = 1; i <= 5; i++) assertAccessDenied(await attempt(t, 'ghost', 'wrong-password', `198.51.100.${i}`));
    assertLocked(t, await attempt(t, 'ghost', 'wrong-password', '198.51.100.6'), 900, 'ghost');
    assert.deepEqual(await knownAddresses(t), [{ user_id: 2, address: '192.0.2.1' }]);
  });

  it('remembers the latest 10 addresses an account logged in from', async () => {
    for (let i = 1; i <= 12; i++) {
      assertAllowed(await attempt(t, ALICE.login, ALICE.password, `192.0.2.${i}`));
      t.time.advance(1);
    }
    assert.deepEqual(
      (await knownAddresses(t)).map((row) => row.address).sort(),
      Array.from({ length: 10 }, (_, i) => `192.0.2.${i + 3}`).sort(),
    );
    for (let i = 1; i <= 5; i++) assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', `198.51.100.${i}`));
    assertLocked(t, await attempt(t, ALICE.login, ALICE.password, '192.0.2.1'), 888, ALICE.login);
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '192.0.2.3'));
  });

  it('forgets an account\'s addresses with its record', async () => {
    assertAllowed(await attempt(t, ALICE.login, ALICE.password, '192.0.2.1'));
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ method: 'DELETE', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth } });
      assert.equal(res.statusCode, 204);
    }
    // The administrator's own (the one who deleted her) stays.
    assert.deepEqual(await knownAddresses(t), [{ user_id: 1, address: '127.0.0.1' }]);
  });
});

describe('lockout with CMI_LOCKOUT_WINDOW', () => {
  it('Retry-After counts down to the end of the configured window', async () => {
    const t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '2', CMI_LOCKOUT_WINDOW: '60' });
    try {
      assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password'));
      t.time.advance(15);
      assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password'));
      assertLocked(t, await attempt(t, ALICE.login, ALICE.password), 45, ALICE.login);
      t.time.advance(44.5);
      assertLocked(t, await attempt(t, ALICE.login, ALICE.password), 1, ALICE.login);
      t.time.advance(0.5);
      assertAllowed(await attempt(t, ALICE.login, ALICE.password));
    } finally {
      await t.close();
    }
  });

  it('Retry-After is the latest end among the counters that refuse', async () => {
    const t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '2', CMI_LOCKOUT_ACCOUNT_MAX_FAILURES: '3', CMI_LOCKOUT_WINDOW: '60' });
    try {
      assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.1'));
      t.time.advance(20);
      assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.2'));
      assertAccessDenied(await attempt(t, ALICE.login, 'wrong-password', '203.0.113.2'));
      // The account's counter ends in 40 s, this name's from this address in 60 s.
      assertLocked(t, await attempt(t, ALICE.login, ALICE.password, '203.0.113.2'), 60, ALICE.login);
      assertLocked(t, await attempt(t, ALICE.login, ALICE.password, '203.0.113.3'), 40, ALICE.login);
    } finally {
      await t.close();
    }
  });
});

describe('the operator lifts a lockout', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ CMI_LOCKOUT_ACCOUNT_MAX_FAILURES: '15' });
  });
  afterEach(() => t.close());

  /** admin refused from two addresses (by login and by email) and, through the account's counter, from any new one. */
  async function lockAdmin(): Promise<void> {
    for (let i = 1; i <= 10; i++) assertAccessDenied(await attempt(t, ADMIN.login, `guess-${i}`, '203.0.113.1'));
    for (let i = 1; i <= 5; i++) assertAccessDenied(await attempt(t, ADMIN.login, `guess-${i}`, '203.0.113.2'));
    for (let i = 1; i <= 10; i++) assertAccessDenied(await attempt(t, ADMIN.email, `guess-${i}`, '203.0.113.2'));
    assertLocked(t, await attempt(t, ADMIN.login, ADMIN.password, '203.0.113.1'), 900, ADMIN.login);
    assertLocked(t, await attempt(t, ADMIN.login, ADMIN.password, '198.51.100.1'), 900, ADMIN.login);
    assertLocked(t, await attempt(t, ADMIN.email, ADMIN.password, '203.0.113.2'), 900, ADMIN.email);
  }

  const env = () => ({ DATABASE_URL: t.config.databaseUrl, LOG_LEVEL: 'warn' });

  it('cmi users unlock clears every counter of the account\'s login and email, not other names\'', async () => {
    await lockAdmin();
    for (let i = 1; i <= 3; i++) assertAccessDenied(await attempt(t, ALICE.login, `guess-${i}`, '203.0.113.1'));
    const res = await runCmi(['local', 'users', 'unlock', 'admin'], env());
    assert.equal(res.stderr, '');
    assert.equal(res.stdout, 'Unlocked user 1 "admin" <admin@example.com>: its failed-login counters are cleared\n');
    assert.equal(res.code, 0);
    assert.deepEqual(await failures(t), [counter('', '203.0.113.1', 13), counter('', '203.0.113.2', 15), counter('alice', '', 3), counter('alice', '203.0.113.1', 3)]);
    assertAllowed(await attempt(t, ADMIN.login, ADMIN.password, '203.0.113.1'));
    assertAllowed(await attempt(t, ADMIN.email, ADMIN.password, '203.0.113.2'));
    assertAllowed(await attempt(t, ADMIN.login, ADMIN.password, '198.51.100.1'));
  });

  it('cmi users unlock names an unknown user like the other commands', async () => {
    const res = await runCmi(['local', 'users', 'unlock', 'ghost'], env());
    assert.equal(res.stderr, 'cmi: no user with id, login or email "ghost"\n');
    assert.equal(res.code, 1);
  });

  it('cmi users reset-password clears them too, so the new password works at once', async () => {
    await lockAdmin();
    const res = await runCmi(['local', 'users', 'reset-password', 'admin', '--password', 'admin-new-password'], env());
    assert.equal(res.stderr, '');
    assert.equal(res.stdout, 'Password of 1 "admin" <admin@example.com> changed; its sessions have ended\n');
    assert.deepEqual(await failures(t), [counter('', '203.0.113.1', 10), counter('', '203.0.113.2', 15)]);
    assertAllowed(await attempt(t, ADMIN.login, 'admin-new-password', '203.0.113.1'));
    assertAllowed(await attempt(t, ADMIN.email, 'admin-new-password', '198.51.100.1'));
  });
});
