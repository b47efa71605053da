import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { dropOrphanedTestSchemas } from '../tools/shared/postgres-schema.js';
import { onPostgres } from './support/database.js';

/** The runner's sweep of test schemas that killed test processes left (docs/architecture.md#running-the-tests). */
describe('dropOrphanedTestSchemas', { skip: !onPostgres && 'test schemas are PostgreSQL\'s' }, () => {
  it('drops the schemas of processes that are gone and keeps those of live ones and every other schema', async () => {
    const url = process.env.DATABASE_URL as string;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    // PID 4194304 is past Linux's pid_max: no process has it.
    const [gone, live, other] = ['cmi_test_4194304_0a1b2c', `cmi_test_${process.pid}_0a1b2c`, 'cmi_testlike_4194304_0a1b2c'];
    try {
      for (const schema of [gone, live, other]) await client.query(`CREATE SCHEMA ${schema}`);
      await client.query(`CREATE TABLE ${gone}.t (id integer)`);
      assert.ok(await dropOrphanedTestSchemas(url) >= 1);
      const { rows } = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname = ANY($1) ORDER BY nspname', [[gone, live, other]]);
      assert.deepEqual(rows.map((row) => row.nspname), [live, other].sort());
    } finally {
      for (const schema of [gone, live, other]) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  });
});
