import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { createTestApp, type TestApp } from './support/app.js';
import { onPostgres } from './support/database.js';
import { eventually } from './support/eventually.js';
import { get } from './support/http.js';

// Another process holds the database's write lock (SQLite: a transaction begun with `begin
// immediate` that has written and not committed; PostgreSQL: a transaction holding an exclusive lock
// on every table a login writes, and on users). A request that only reads answers at once meanwhile: also one with
// credentials this process has not verified yet, whose login bookkeeping (the lockout's counters, the
// addresses a user logs in from) is written once the lock is let go, not before the answer
// (docs/operations.md#when-the-database-is-sick). The lock is held across each request and let go only
// after it answered, for longer than the statement timeout: a request that waited for it would
// answer 503, never 200.

/** On PostgreSQL: the tables a login writes, the one the lock holder writes to, and the users a POST adds to. */
const LOCKED_TABLES = ['failed_logins', 'login_addresses', 'settings', 'users'];

interface LockHolder {
  release(): Promise<void>;
}

async function holdWriteLock(t: TestApp): Promise<LockHolder> {
  if (!onPostgres) {
    const other = new SQLite(t.database.dialect.target);
    other.exec('begin immediate');
    other.prepare("insert into settings (key, value) values ('lock-holder', 'uncommitted')").run();
    return {
      release: () => {
        other.exec('rollback');
        other.close();
        return Promise.resolve();
      },
    };
  }
  const other = new pg.Client({ connectionString: t.config.databaseUrl });
  await other.connect();
  await other.query('begin');
  await other.query(`lock table ${LOCKED_TABLES.join(', ')} in exclusive mode`);
  await other.query("insert into settings (key, value) values ('lock-holder', 'uncommitted')");
  return {
    release: async () => {
      await other.query('rollback');
      await other.end();
    },
  };
}

describe('reads while another process holds the write lock', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ CMI_DB_STATEMENT_TIMEOUT: '1000' });
  });
  after(async () => {
    await t.close();
  });

  const addresses = async () =>
    (await t.database.db.selectFrom('login_addresses').select(['user_id', 'address']).orderBy('user_id').execute()).map((row) => [row.user_id, row.address]);

  it('answers GET /version.json with credentials not verified before 200, and records the login once the lock is let go', async () => {
    assert.deepEqual(await addresses(), []);
    const lock = await holdWriteLock(t);
    let answered: [number, string] | undefined;
    try {
      const res = await get(t.app, '/version.json', { authorization: t.adminAuth });
      answered = [res.statusCode, res.body];
      // Still held: the answer did not wait for it.
      assert.deepEqual(await addresses(), []);
    } finally {
      await lock.release();
    }
    assert.deepEqual(answered, [200, '{"version":"6.7"}']);
    // The bookkeeping the login deferred: the address remembered, no failure left counted.
    await eventually(async () => assert.deepEqual(await addresses(), [[t.admin.id, '127.0.0.1']]));
    assert.deepEqual(await t.database.db.selectFrom('failed_logins').select(['account', 'address', 'failures']).where('failures', '>', 0).execute(), []);
  });

  it('answers GET /users.json 200 (another user, a page not cached) while a write of this process waits for the lock', async () => {
    const lock = await holdWriteLock(t);
    let answered: [number, string | undefined, string[]] | undefined;
    let created: Promise<number> | undefined;
    try {
      // A write of this process, waiting for the lock (it answers 503 after the statement timeout).
      created = t.app
        .inject({
          method: 'POST',
          url: '/users.json',
          headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
          payload: JSON.stringify({ user: { login: 'waiting', email: 'waiting@example.com', password: 'waiting-password' } }),
        })
        .then((res) => res.statusCode);
      const res = await get(t.app, '/users.json?per_page=1', { authorization: t.aliceAuth });
      const logins = (JSON.parse(res.body) as Array<{ user: { login: string } }>).map((entry) => entry.user.login);
      answered = [res.statusCode, res.headers['x-total'] as string | undefined, logins];
      // Held until the write gave up: the read answered while it waited.
      assert.equal(await created, 503);
    } finally {
      await lock.release();
    }
    assert.deepEqual(answered, [200, '1', ['alice']]);
    await eventually(async () => assert.deepEqual(await addresses(), [[t.admin.id, '127.0.0.1'], [t.alice.id, '127.0.0.1']]));
  });

  it('still answers a wrong password 503 while the failure cannot be written, and counts it once the lock is let go', async () => {
    const lock = await holdWriteLock(t);
    let answered: number | undefined;
    try {
      answered = (await get(t.app, '/version.json', { authorization: t.basic('alice', 'wrong-password') })).statusCode;
    } finally {
      await lock.release();
    }
    assert.equal(answered, 503);
    await eventually(async () =>
      assert.deepEqual(
        (await t.database.db.selectFrom('failed_logins').select(['account', 'address', 'failures']).where('failures', '>', 0).orderBy('account').orderBy('address').execute()).map(
          (row) => [row.account, row.address, Number(row.failures)],
        ),
        [['', '127.0.0.1', 1], ['alice', '', 1], ['alice', '127.0.0.1', 1]],
      ),
    );
  });
});
