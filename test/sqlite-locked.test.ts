import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { createTestApp, type TestApp } from './support/app.js';
import { onPostgres } from './support/database.js';
import { get } from './support/http.js';

const UNAVAILABLE_JSON = '{"errors":{"base":["Service unavailable: the database is locked by another process; try again later"]}}';

/**
 * Another process (a backup, a sqlite3 shell, `cmi migrate`) holds SQLite's write lock. cmi must not
 * wait for it synchronously: liveness and cached reads answer meanwhile, and a write waits for the
 * lock for at most CMI_DB_STATEMENT_TIMEOUT, then answers 503 (docs/operations.md).
 */
describe('SQLite write-locked by another process', { skip: onPostgres && 'SQLite only: PostgreSQL has no database-wide write lock' }, () => {
  let t: TestApp;
  let other: SQLite.Database;
  before(async () => {
    t = await createTestApp({ CMI_DB_STATEMENT_TIMEOUT: '2000' });
    other = new SQLite(t.database.dialect.target);
  });
  after(async () => {
    if (other.inTransaction) other.exec('rollback');
    other.close();
    await t.close();
  });

  const createUser = (login: string) =>
    t.app.inject({
      method: 'POST',
      url: '/users.json',
      headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
      payload: JSON.stringify({ user: { login, email: `${login}@example.com`, password: `${login}-password` } }),
    });

  it('answers liveness and a cached page while a write waits, and the write goes through when the lock is let go', async () => {
    const page = () => get(t.app, '/users.json', { authorization: t.adminAuth });
    assert.equal((await page()).statusCode, 200);
    other.exec('begin exclusive');
    // The lock is let go from this process's own event loop, a moment after the write began: a
    // write that waited for the lock synchronously would hold the loop, never see it let go, and fail.
    const answeredMeanwhile: unknown[][] = [];
    setTimeout(() => {
      void (async () => {
        const live = await get(t.app, '/health/live.json');
        answeredMeanwhile.push([live.statusCode, live.body]);
        const cached = await page();
        answeredMeanwhile.push([cached.statusCode, cached.headers['x-total']]);
        other.exec('commit');
      })();
    }, 100);
    const res = await createUser('waiting');
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(answeredMeanwhile, [[200, '{"status":"ok"}'], [200, '2']]);
    assert.equal((await page()).headers['x-total'], '3');
  });

  it('answers a write 503 with Retry-After once the lock outlasts the statement timeout, and records no fault', async () => {
    other.exec('begin exclusive');
    try {
      const res = await createUser('refused');
      assert.equal(res.statusCode, 503);
      assert.equal(res.headers['retry-after'], '1');
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(res.body, UNAVAILABLE_JSON);
      const xml = await t.app.inject({
        method: 'POST',
        url: '/users.xml',
        headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
        payload: JSON.stringify({ user: { login: 'refused2', email: 'refused2@example.com', password: 'refused-password' } }),
      });
      assert.equal(xml.statusCode, 503);
      assert.equal(
        xml.body,
        '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Service unavailable: the database is locked by another process; try again later</error>\n</errors>\n',
      );
    } finally {
      other.exec('rollback');
    }
    const logins = await t.database.db.selectFrom('users').select('login').orderBy('id').execute();
    assert.deepEqual(logins.map((row) => row.login), ['admin', 'alice', 'waiting']);
    assert.deepEqual(await t.database.db.selectFrom('infrastructure_errors').selectAll().execute(), []);
  });

  it('answers an uncached login 503, not 500, while the failure counters cannot be written', async () => {
    other.exec('begin exclusive');
    try {
      const res = await get(t.app, '/version.json', { authorization: t.basic('alice', 'wrong-password') });
      assert.equal(res.statusCode, 503);
      assert.equal(res.headers['retry-after'], '1');
      assert.equal(res.body, UNAVAILABLE_JSON);
    } finally {
      other.exec('rollback');
    }
  });
});
