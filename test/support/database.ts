import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { dialectFor } from '../../src/db/database-url.js';
import { type FreshDatabase, postgresSchema } from '../../tools/shared/postgres-schema.js';

export { type FreshDatabase, postgresSchema } from '../../tools/shared/postgres-schema.js';

/**
 * The suite runs on SQLite by default and on PostgreSQL when DATABASE_URL names one
 * (`DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test`).
 */
const target = process.env.DATABASE_URL;
export const onPostgres = target !== undefined && target !== '' && dialectFor(target).name === 'postgres';

/** An empty database of its own: a SQLite file in a temp dir, or a new PostgreSQL schema. */
export async function freshDatabase(): Promise<FreshDatabase> {
  if (!onPostgres) {
    const dir = mkdtempSync(join(tmpdir(), 'cmi-test-'));
    return { url: `sqlite:${join(dir, 'cmi.sqlite3')}`, drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })) };
  }
  return postgresSchema(target as string, 'cmi_test');
}

/** In the describe() it is called in: each test gets an empty database of its own, opened, not yet migrated. */
export function databasePerTest(): { readonly database: Database } {
  let fresh: FreshDatabase | undefined;
  let database: Database | undefined;
  beforeEach(async () => {
    fresh = await freshDatabase();
    database = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
  });
  afterEach(async () => {
    await database?.close();
    await fresh?.drop();
  });
  return {
    get database(): Database {
      if (!database) throw new Error('databasePerTest: no test is running');
      return database;
    },
  };
}
