import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/app/app.js';
import { type Database, openDatabase } from '../src/db/database.js';
import { createTestApp, type TestApp } from './support/app.js';
import { onPostgres } from './support/database.js';
import { get } from './support/http.js';
import { validateResponses } from './support/response-validation.js';

const REFUSED_JSON = '{"errors":{"base":["Service unavailable: the database refuses writes; try again later"]}}';

/**
 * A database that answers reads but refuses writes (a full disk, a read-only replica or file system):
 * readiness says so, and what needs a write answers 503 with Retry-After, never 500
 * (docs/operations.md#when-the-database-is-sick).
 */
describe('a database that refuses writes', () => {
  let t: TestApp;
  let readOnly: Database | undefined;
  let app: FastifyInstance;
  before(async () => {
    t = await createTestApp();
    // A credential verified while writes still worked, so reads can be shown to go on.
    assert.equal((await get(t.app, '/users.json', { authorization: t.adminAuth })).statusCode, 200);
    if (onPostgres) {
      // A second app on one connection, which turns read-only once its credential is verified, as
      // on a server whose disk filled up.
      readOnly = openDatabase(loadConfig({ DATABASE_URL: t.config.databaseUrl, CMI_DB_POOL: '1' }));
      app = await buildApp({ config: t.config, database: readOnly, clock: t.time.clock, extend: validateResponses(), logger: false });
      assert.equal((await get(app, '/users.json', { authorization: t.adminAuth })).statusCode, 200);
      await sql`set session default_transaction_read_only = on`.execute(readOnly.db);
    } else {
      app = t.app;
      await sql`pragma query_only = on`.execute(t.database.db);
    }
  });
  after(async () => {
    if (readOnly) {
      await app.close();
      await readOnly.close();
    }
    await t.close();
  });

  it('makes GET /health/ready answer 503 "database refuses writes"', async () => {
    const res = await get(app, '/health/ready.json');
    assert.equal(res.statusCode, 503);
    const { rows } = await sql<{ name: string }>`select max(name) as name from kysely_migration`.execute(t.database.db);
    assert.equal(res.body, `{"status":"database refuses writes","schema_version":"${rows[0]?.name}"}`);
  });

  it('answers a login that must count an attempt 503 with Retry-After, and records no fault', async () => {
    const res = await get(app, '/version.json', { authorization: t.basic('alice', 'wrong-password') });
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['retry-after'], '5');
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.body, REFUSED_JSON);
    assert.deepEqual(await t.database.db.selectFrom('infrastructure_errors').selectAll().execute(), []);
  });

  it('answers a write 503, and reads with a verified credential 200', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/sysadmin_tools/infrastructure/errors.json',
      headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
      payload: '{"error_class":"DiskFull"}',
    });
    assert.equal(res.statusCode, 503);
    assert.equal(res.body, REFUSED_JSON);
    const read = await get(app, '/users/2.json', { authorization: t.adminAuth });
    assert.equal(read.statusCode, 200);
  });
});
