import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../src/app/app.js';
import { createTestApp, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { countingStatements } from './support/statement-count.js';

// A users page is kept rendered until the users' data changes in any process
// (docs/architecture.md#how-cached-pages-stay-right); another process's writes to anything else, a
// password check's login counters among them, leave it kept. Statements are counted to see a kept page.
describe('a kept users page stays through other processes\' logins', () => {
  let t: TestApp;
  let app: FastifyInstance;
  let statements = 0;
  const counting = countingStatements(() => (statements += 1));

  before(async () => {
    t = await createTestApp();
    app = await buildApp({ config: t.config, database: { ...t.database, db: t.database.db.withPlugin(counting) }, clock: t.time.clock, logger: false });
  });
  after(async () => {
    await app?.close();
    await t?.close();
  });

  const URL = '/users.json?page=1&per_page=10';
  /** GETs the page; its status, body and how many statements answering it took. */
  const read = async () => {
    const before = statements;
    const res = await app.inject({ url: URL, headers: { authorization: t.adminAuth } });
    return { status: res.statusCode, body: res.body, statements: statements - before };
  };
  /** Reads the page until it is kept (on PostgreSQL the version settles when a write's notification arrives). */
  const kept = () =>
    eventually(async () => {
      await read();
      assert.equal((await read()).statements, 0, 'the page is answered without a statement');
    });
  /** The data version of this process's SQLite connection; undefined on PostgreSQL. */
  const sqliteDataVersion = async () =>
    t.database.dialect.name === 'sqlite' ? (await sql<{ data_version: number }>`pragma data_version`.execute(t.database.db)).rows[0]?.data_version : undefined;

  it('answers the page with no statement after a password login in another process wrote its login counters', async () => {
    await kept();
    const page = await read();
    const before = await sqliteDataVersion();
    const other = await t.secondProcess();
    try {
      // A process that never saw alice's password checks it (argon2id) and writes its login counters.
      const login = await other.app.inject({ url: '/version.json', headers: { authorization: t.aliceAuth } });
      assert.equal(login.statusCode, 200, login.body);
    } finally {
      await other.close();
    }
    // SQLite: the other process's commit moved this connection's PRAGMA data_version (so the page's
    // version was asked to move), which this process reads at most once a millisecond: 2 ms on.
    // PostgreSQL: every notification committed before is heard.
    if (before !== undefined) assert.notEqual(await sqliteDataVersion(), before);
    await new Promise((resolve) => setTimeout(resolve, 2));
    await t.database.dataVersions.credentialsHeard();
    assert.deepEqual(await read(), { ...page, statements: 0 });
  });

  it('answers the page anew once another process changed a user', async () => {
    await kept();
    const other = await t.secondProcess();
    try {
      const res = await other.app.inject({
        method: 'PUT', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: '{"last_name":"Other"}',
      });
      assert.equal(res.statusCode, 204, res.body);
    } finally {
      await other.close();
    }
    await eventually(async () => {
      const again = await read();
      assert.ok(again.statements > 0 && again.body.includes('"last_name":"Other"'), `the page is read again and shows the change: ${again.statements} statements, ${again.body}`);
    });
  });
});
