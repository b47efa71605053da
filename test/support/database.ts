import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { type Database, migrateToLatest, openDatabase } from '../../src/db/database.js';
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

/**
 * A database of its own with every migration applied, as `cmi migrate` leaves it: a copy of a template
 * migrated once (docs/architecture.md#running-the-tests). On SQLite the template is a file this process
 * migrates once and copies for each test; on PostgreSQL it is a database named after the migrations'
 * code, migrated by the first test file to need it and copied with `CREATE DATABASE ... TEMPLATE`, which
 * costs a tenth of running the migrations.
 */
export async function migratedDatabase(): Promise<FreshDatabase> {
  if (!onPostgres) {
    const template = await (sqliteTemplate ??= migratedSqliteTemplate());
    const dir = mkdtempSync(join(tmpdir(), 'cmi-test-'));
    const file = join(dir, 'cmi.sqlite3');
    copyFileSync(template, file);
    return { url: `sqlite:${file}`, drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })) };
  }
  const template = await (postgresTemplate ??= migratedPostgresTemplate(target as string));
  const name = `cmi_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(target as string, (admin) => admin.query(`CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY WAL_LOG`));
  return {
    url: databaseUrl(target as string, name),
    // FORCE: a connection a failed test left open does not keep its database.
    drop: () => withAdmin(target as string, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

let sqliteTemplate: Promise<string> | undefined;
let postgresTemplate: Promise<string> | undefined;

async function migratedSqliteTemplate(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'cmi-template-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'cmi.sqlite3');
  const database = openDatabase(loadConfig({ DATABASE_URL: `sqlite:${file}` }));
  try {
    await migrateToLatest(database);
  } finally {
    // Closed, the last connection folds its write-ahead log into the file: the file alone is the database.
    await database.close();
  }
  return file;
}

/**
 * The PostgreSQL template for this code's migrations: `cmi_template_<hash of src/db>`. Built under a
 * lock by the first file to want it, under a name of its own, then renamed, so a template seen is whole.
 * It takes no connections, which `CREATE DATABASE ... TEMPLATE` needs of its source.
 */
async function migratedPostgresTemplate(url: string): Promise<string> {
  const name = `cmi_template_${codeHash(new URL('../../src/db/', import.meta.url).pathname)}`;
  await withAdmin(url, async (admin) => {
    await admin.query("SELECT pg_advisory_lock(hashtext('cmi_template'))");
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      // The code's migrations changed: the older templates go but the newest two (another checkout's
      // suite may be running on one of them).
      const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'cmi\\_template\\_%' ORDER BY oid DESC OFFSET 2");
      for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
      const building = `${name}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      const database = openDatabase(loadConfig({ DATABASE_URL: databaseUrl(url, building) }));
      try {
        await migrateToLatest(database);
      } finally {
        await database.close();
      }
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    }
    await admin.query("SELECT pg_advisory_unlock(hashtext('cmi_template'))");
  });
  return name;
}

/** A short hash of every file under `dir`: the migrations and the code they run. */
function codeHash(dir: string): string {
  const hash = createHash('sha256');
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort()) {
    hash.update(relative(dir, entry)).update(readFileSync(entry));
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * A DBA's way into a test's PostgreSQL database: the same database on a search_path that is not the
 * app's (pg_catalog alone), so a table must be named with its schema, as in psql by hand.
 */
export function anotherSearchPath(url: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', '-c search_path=pg_catalog');
  return parsed.toString();
}

/** The URL `url` with its database name replaced by `name` (its options kept). */
function databaseUrl(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function withAdmin<T>(url: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
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
