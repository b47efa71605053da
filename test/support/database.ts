import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Socket } from 'node:net';
import { join, relative } from 'node:path';
import { afterEach, beforeEach } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { type Database, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { dialectFor } from '../../src/db/database-url.js';
import { type FreshDatabase, postgresSchema, schemaUrl } from '../../tools/shared/postgres-schema.js';

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
 * migrates once and copies for each test; on PostgreSQL it is the schema `cmi_template_<hash of src/db/>`,
 * whose `pg_dump` each test's new schema replays in one statement: a fifth of the CPU of the migrations.
 */
export async function migratedDatabase(): Promise<FreshDatabase> {
  if (!onPostgres) {
    const template = await (sqliteTemplate ??= migratedSqliteTemplate());
    const dir = mkdtempSync(join(tmpdir(), 'cmi-test-'));
    const file = join(dir, 'cmi.sqlite3');
    copyFileSync(template, file);
    return { url: `sqlite:${file}`, drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })) };
  }
  const url = target as string;
  const template = await (postgresTemplate ??= migratedPostgresTemplate(url));
  const schema = `cmi_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(url, template.dump.replaceAll(template.schema, schema));
  return { url: schemaUrl(url, schema), drop: () => adminQuery(url, `DROP SCHEMA ${schema} CASCADE`) };
}

let admin: Promise<{ client: pg.Client; socket: Socket }> | undefined;
let adminQueries = 0;

/**
 * A statement on this process's one connection for making and dropping schemas: a new connection costs
 * the server about 40 ms of CPU. Its socket holds the process open only while a statement runs.
 */
async function adminQuery(url: string, text: string): Promise<void> {
  admin ??= (async () => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => (admin = undefined));
    await client.connect();
    return { client, socket: (client as unknown as { connection: { stream: Socket } }).connection.stream };
  })();
  const { client, socket } = await admin;
  if (adminQueries++ === 0) socket.ref();
  try {
    await client.query(text);
  } finally {
    if (--adminQueries === 0) socket.unref();
  }
}

let sqliteTemplate: Promise<string> | undefined;
let postgresTemplate: Promise<{ schema: string; dump: string }> | undefined;

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
 * The PostgreSQL template for this code's migrations, and its dump: the schema
 * `cmi_template_<hash of src/db/>`, migrated under a lock by each process that wants it (at once done
 * when it is whole, finished when a process died building it); the dump (`pg_dump --schema`, psql's
 * own commands taken out) is kept in the temp dir for the processes after, named by the schema and
 * the server. A new template drops the older ones but the newest two (another checkout's suite may
 * be running on one of them).
 */
async function migratedPostgresTemplate(url: string): Promise<{ schema: string; dump: string }> {
  const schema = `cmi_template_${codeHash(new URL('../../src/db/', import.meta.url).pathname)}`;
  const kept = join(tmpdir(), `${schema}-${createHash('sha256').update(url).digest('hex').slice(0, 8)}.sql`);
  await withAdmin(url, async (admin) => {
    await admin.query("SELECT pg_advisory_lock(hashtext('cmi_template'))");
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
      if (rowCount === 0) {
        const { rows } = await admin.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'cmi\\_template\\_%' ORDER BY oid DESC OFFSET 2");
        for (const { nspname } of rows) await admin.query(`DROP SCHEMA ${nspname} CASCADE`);
        await admin.query(`CREATE SCHEMA ${schema}`);
      }
      const database = openDatabase(loadConfig({ DATABASE_URL: schemaUrl(url, schema) }));
      try {
        await migrateToLatest(database);
      } finally {
        await database.close();
      }
      if (!existsSync(kept)) {
        const dump = execFileSync('pg_dump', ['--dbname', url, '--schema', schema, '--inserts', '--no-owner', '--no-privileges'], { encoding: 'utf8' });
        const next = `${kept}.${process.pid}`;
        writeFileSync(next, dump.split('\n').filter((line) => !line.startsWith('\\')).join('\n'));
        renameSync(next, kept);
      }
    } finally {
      await admin.query("SELECT pg_advisory_unlock(hashtext('cmi_template'))");
    }
  });
  return { schema, dump: readFileSync(kept, 'utf8') };
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
