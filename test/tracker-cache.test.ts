import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../src/app/app.js';
import { createTestApp, type TestApp } from './support/app.js';
import { ERRORS, forbiddenJson, NOT_FOUND_JSON } from './support/error-reports.js';
import { anotherSearchPath, onPostgres } from './support/database.js';
import { eventually } from './support/eventually.js';
import { validateResponses } from './support/response-validation.js';
import { countingStatements } from './support/statement-count.js';

// The tracker's list pages and records are kept rendered until the tracker changes in any process
// (docs/architecture.md#how-cached-pages-stay-right). Statements are counted to see a kept answer.
describe('the error tracker\'s answers are kept until the tracker changes', () => {
  let t: TestApp;
  let app: FastifyInstance;
  let other: { app: FastifyInstance; close(): Promise<void> };
  let statements = 0;
  const counting = countingStatements(() => (statements += 1));

  before(async () => {
    t = await createTestApp();
    app = await buildApp({ config: t.config, database: { ...t.database, db: t.database.db.withPlugin(counting) }, clock: t.time.clock, extend: validateResponses(), logger: false });
    other = await t.secondProcess();
  });
  after(async () => {
    await other.close();
    await app.close();
    await t.close();
  });

  const post = async (on: FastifyInstance, fields: Record<string, unknown>) => {
    const res = await on.inject({
      method: 'POST',
      url: `${ERRORS}.json`,
      headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
      payload: JSON.stringify(fields),
    });
    assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
    return (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
  };

  /** GETs `url` as `authorization`; its status, body, X-Total and how many statements answering it took. */
  const read = async (url: string, authorization = t.adminAuth) => {
    const before = statements;
    const res = await app.inject({ url, headers: { authorization } });
    return { status: res.statusCode, body: res.body, total: res.headers['x-total'], statements: statements - before };
  };
  /** Settles once every notification committed before it has been heard (PostgreSQL; nothing to wait for on SQLite). */
  const heard = async () => {
    await t.database.dataVersions.credentialsHeard();
  };
  const counterIn = (body: string) => (JSON.parse(body) as { infrastructure_error: { counter: number } }).infrastructure_error.counter;

  /**
   * Reads `url` until it is kept (on PostgreSQL the version settles when the write's notification
   * arrives, and a late one can come after a first read with no statement): the read that needed none.
   */
  const kept = (url: string) =>
    eventually(async () => {
      await read(url);
      const again = await read(url);
      assert.equal(again.statements, 0);
      return again;
    });

  it('answers a record again with no statement, and anew after a repeat of it is counted', async () => {
    const id = await post(app, { error_class: 'DiskFull', message: 'no space on /var', host: 'hv-1' });
    const url = `${ERRORS}/${id}.json`;
    const first = await kept(url);
    assert.deepEqual([first.status, counterIn(first.body), first.statements], [200, 1, 0]);

    await post(app, { error_class: 'DiskFull', message: 'no space on /var', host: 'hv-1' });
    const second = await read(url);
    assert.equal(second.status, 200);
    assert.equal(counterIn(second.body), 2);
    assert.ok(second.statements > 0);
  });

  it('answers a filtered list page again with no statement, and anew after a new error matches it', async () => {
    const url = `${ERRORS}.json?host=hv-2&per_page=5`;
    await post(app, { error_class: 'LinkDown', host: 'hv-2' });
    const first = await kept(url);
    assert.deepEqual([first.status, first.total, first.statements], [200, '1', 0]);

    await post(app, { error_class: 'FanFailure', host: 'hv-2' });
    const second = await read(url);
    assert.deepEqual([second.status, second.total], [200, '2']);
    assert.deepEqual((JSON.parse(second.body) as Array<{ infrastructure_error: { error_class: string } }>).map((e) => e.infrastructure_error.error_class), ['FanFailure', 'LinkDown']);
  });

  it('keeps the pages a report of a new error cannot change: a record, a list filtered on another host, class or component', async () => {
    const id = await post(app, { error_class: 'ThermalAlarm', host: 'hv-10', component: 'ipmi' });
    const record = `${ERRORS}/${id}.json`;
    const otherHost = `${ERRORS}.json?host=hv-10`;
    const otherClass = `${ERRORS}.json?error_class=ThermalAlarm`;
    const otherComponent = `${ERRORS}.json?component=ipmi&per_page=3`;
    const urls = [record, otherHost, otherClass, otherComponent];
    for (const url of urls) await kept(url);
    const before = new Map<string, string>();
    for (const url of urls) before.set(url, (await read(url)).body);

    await post(app, { error_class: 'PsuLost', host: 'hv-11', component: 'psu' });
    // On PostgreSQL the batch's notification has been heard by now: this process's own is not counted
    // (docs/architecture.md#how-cached-pages-stay-right).
    await heard();
    for (const url of urls) {
      const again = await read(url);
      assert.deepEqual([url, again.status, again.body, again.statements], [url, 200, before.get(url), 0]);
    }
    // What it can change is answered anew: the unfiltered list, and the lists its host or class select.
    const all = await read(`${ERRORS}.json?per_page=1`);
    assert.equal((JSON.parse(all.body) as Array<{ infrastructure_error: { error_class: string } }>)[0]?.infrastructure_error.error_class, 'PsuLost');
    assert.equal((await read(`${ERRORS}.json?host=hv-11`)).total, '1');
    assert.equal((await read(`${ERRORS}.json?error_class=psulost`)).total, '0');
    assert.equal((await read(`${ERRORS}.json?error_class=PsuLost`)).total, '1');
  });

  it('answers a list filtered on a host anew when an error seen there is reported again from elsewhere (its counter and order move)', async () => {
    const id = await post(app, { error_class: 'RaidDegraded', host: 'hv-12' });
    const url = `${ERRORS}.json?host=hv-12`;
    await kept(url);
    const before = (JSON.parse((await read(url)).body) as Array<{ infrastructure_error: { id: number; counter: number } }>).find((e) => e.infrastructure_error.id === id);
    assert.equal(before?.infrastructure_error.counter, 1);
    await post(app, { error_class: 'RaidDegraded', host: 'hv-13' });
    const after = await read(url);
    assert.ok(after.statements > 0, 'answered anew');
    assert.equal((JSON.parse(after.body) as Array<{ infrastructure_error: { id: number; counter: number } }>).find((e) => e.infrastructure_error.id === id)?.infrastructure_error.counter, 2);
  });

  it('answers a list filtered on a host anew when another process reports a new error there, and when it reports one elsewhere', async () => {
    await post(app, { error_class: 'NicFlap', host: 'hv-14' });
    const url = `${ERRORS}.json?host=hv-14`;
    await kept(url);
    await post(other.app, { error_class: 'NicFlapAgain', host: 'hv-14' });
    await eventually(async () => assert.equal((await read(url)).total, '2'));
    // Another process's writes are not told here: any of them answers the page anew.
    await kept(url);
    await post(other.app, { error_class: 'Elsewhere', host: 'hv-15' });
    await eventually(async () => assert.ok((await read(url)).statements > 0, 'answered anew after another process wrote'));
  });

  it('keeps a list page through this process\'s new error elsewhere, and answers it anew after another process\'s', async () => {
    await post(app, { error_class: 'CoolantLeak', host: 'hv-20' });
    const url = `${ERRORS}.json?host=hv-20`;
    const first = await kept(url);
    await post(app, { error_class: 'CoolantLeakElsewhere', host: 'hv-21' });
    await heard();
    assert.deepEqual(await read(url).then(({ status, body, statements: n }) => [status, body, n]), [200, first.body, 0]);
    // Another process's new error elsewhere cannot change the page either, but it is not told here:
    // its write moves the version, and the page is answered anew (the same bytes).
    await post(other.app, { error_class: 'CoolantLeakAfar', host: 'hv-22' });
    await heard();
    await eventually(async () => {
      const again = await read(url);
      assert.deepEqual([again.status, again.body], [200, first.body]);
      assert.ok(again.statements > 0, 'answered anew after another process wrote');
    });
  });

  it('answers a list page anew after a write by hand on another connection (PostgreSQL: psql)', { skip: !onPostgres && 'SQLite: another connection is another process, as the test above' }, async () => {
    // PostgreSQL only: a connection outside this process's pool notifies from a server process of its
    // own; on SQLite any other connection's write moves data_version, which the test above covers.
    await post(app, { error_class: 'ByHandNearby', host: 'hv-23' });
    const elsewhere = await post(app, { error_class: 'ByHandElsewhere', host: 'hv-24' });
    const url = `${ERRORS}.json?host=hv-23`;
    const first = await kept(url);
    const dba = new pg.Client({ connectionString: anotherSearchPath(t.config.databaseUrl) });
    await dba.connect();
    try {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(t.database.db);
      await dba.query(`update "${rows[0]!.schema}".infrastructure_errors set counter = 7 where id = $1`, [elsewhere]);
    } finally {
      await dba.end();
    }
    await heard();
    const again = await read(url);
    assert.deepEqual([again.status, again.body], [200, first.body]);
    assert.ok(again.statements > 0, 'answered anew after a write on another connection');
  });

  it('answers 404 for a kept record once it is deleted', async () => {
    const id = await post(app, { error_class: 'Gone' });
    const url = `${ERRORS}/${id}.json`;
    await kept(url);
    const deleted = await app.inject({ method: 'DELETE', url: `${ERRORS}/${id}.json`, headers: { authorization: t.adminAuth } });
    assert.equal(deleted.statusCode, 204);
    assert.deepEqual(await read(url).then(({ status, body }) => [status, body]), [404, NOT_FOUND_JSON]);
  });

  it('sees what another process records (SQLite\'s data_version; the tracker\'s own channel on PostgreSQL, migration 011)', async () => {
    const id = await post(app, { error_class: 'FromAfar', host: 'hv-3' });
    const url = `${ERRORS}/${id}.json`;
    await kept(url);
    await post(other.app, { error_class: 'FromAfar', host: 'hv-3' });
    await eventually(async () => assert.equal(counterIn((await read(url)).body), 2));
  });

  it('never keeps a record read while its deletion was being committed (PostgreSQL: another connection reads it)', { skip: !onPostgres && 'SQLite has one connection: a read waits for the transaction' }, async () => {
    // PostgreSQL only: on SQLite the one connection is held by the transaction, so no read can happen
    // between its last statement and its commit; the race this test stages does not exist there.
    const id = await post(app, { error_class: 'DeletedMidway' });
    const url = `${ERRORS}/${id}.json`;
    // The deletion's statements all run (each moves the version); its commit then waits for a lock this
    // test holds, through a deferred trigger of the test's own.
    const { db } = t.database;
    await sql`create function hold_commit() returns trigger language plpgsql as $$ begin perform pg_advisory_xact_lock(4242); return null; end $$`.execute(db);
    await sql`create constraint trigger hold_commit after delete on infrastructure_errors deferrable initially deferred for each row execute function hold_commit()`.execute(db);
    let deleting: Promise<{ statusCode: number }> | undefined;
    await db.connection().execute(async (holder) => {
      await sql`select pg_advisory_lock(4242)`.execute(holder);
      deleting = app.inject({ method: 'DELETE', url, headers: { authorization: t.adminAuth } });
      await eventually(async () => {
        const { rows } = await sql<{ waiting: number }>`select count(*)::int as waiting from pg_stat_activity where wait_event = 'advisory'`.execute(db);
        assert.equal(rows[0]?.waiting, 1);
      });
      // Read meanwhile on another connection: the row is still there, and the page is kept under the moved version.
      assert.equal((await read(url)).status, 200);
      await sql`select pg_advisory_unlock(4242)`.execute(holder);
    });
    assert.equal((await deleting!).statusCode, 204);
    // The deletion's answer came: the same client reads it gone at once, not once a notification arrives.
    assert.deepEqual(await read(url).then(({ status, body }) => [status, body]), [404, NOT_FOUND_JSON]);
  });

  it('sees a change made by hand in another search_path (PostgreSQL: the notification names the table\'s schema, migration 012)', { skip: !onPostgres && 'SQLite\'s data_version sees every other connection\'s write' }, async () => {
    // PostgreSQL only: the payload's schema is a PostgreSQL notification's; SQLite learns of another
    // connection's write from data_version whatever the writer, which the other-process test covers.
    const id = await post(app, { error_class: 'FixedByHand' });
    const url = `${ERRORS}/${id}.json`;
    await kept(url);
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(t.database.db);
    // A DBA in psql: another search_path than the app's, the table named with its schema.
    const dba = new pg.Client({ connectionString: anotherSearchPath(t.config.databaseUrl) });
    await dba.connect();
    try {
      await dba.query(`update "${rows[0]!.schema}".infrastructure_errors set counter = 41 where id = $1`, [id]);
    } finally {
      await dba.end();
    }
    await eventually(async () => assert.equal(counterIn((await read(url)).body), 41));
  });

  it('never answers a kept record to an administrator who is one no longer', async () => {
    const [bob] = await t.addUsers(1, 'admin');
    const bobAuth = t.basic(bob!.login, 'shared-password');
    const id = await post(app, { error_class: 'ForAdminsOnly' });
    const url = `${ERRORS}/${id}.json`;
    await eventually(async () => {
      await read(url, bobAuth);
      assert.deepEqual(await read(url, bobAuth).then(({ status, statements: n }) => [status, n]), [200, 0]);
    });
    const demoted = await app.inject({
      method: 'PUT',
      url: `/users/${bob!.id}.json`,
      headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
      payload: JSON.stringify({ user: { role: 'user' } }),
    });
    assert.equal(demoted.statusCode, 204, demoted.body);
    assert.deepEqual(await read(url, bobAuth).then(({ status, body }) => [status, body]), [403, forbiddenJson('infrastructure_errors.read')]);
  });
});
