import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Socket } from 'node:net';
import { join, relative } from 'node:path';
import { after, afterEach, beforeEach } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { type Database, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { dialectFor } from '../../src/db/database-url.js';
import { type FreshDatabase, schemaUrl, testSchemaName } from '../../tools/shared/postgres-schema.js';

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
  const url = target as string;
  const schema = testSchemaName(randomBytes(6).toString('hex'));
  await adminQuery(url, `CREATE SCHEMA ${schema}`);
  return { url: schemaUrl(url, schema), drop: () => adminQuery(url, `DROP SCHEMA ${schema} CASCADE`).then(() => undefined) };
}

/**
 * A database of its own with every migration applied, as `cmi migrate` leaves it: a copy of a template
 * migrated once (docs/architecture.md#running-the-tests). On SQLite the template is a file this process
 * migrates once and copies for each test; on PostgreSQL it is the schema `cmi_template_<hash of src/db/>`,
 * whose `pg_dump` a new schema replays in one statement (a fifth of the CPU of the migrations). A schema
 * a test is done with is emptied back to the template's rows and given to the next test of the process
 * when its catalogue is still the template's (docs/architecture.md#running-the-tests: a tenth of the time of a new one).
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
  let schema = spareSchemas.pop();
  if (schema === undefined) {
    schema = testSchemaName(randomBytes(6).toString('hex'));
    await adminQuery(url, template.dump.replaceAll(template.schema, schema));
    template.catalogue ??= await catalogue(url, schema);
    uses.set(schema, 0);
  }
  const taken = schema;
  return { url: schemaUrl(url, taken), drop: () => giveBack(url, template, taken) };
}

/** Schemas emptied to the template's rows, for the next test of this process; dropped when it ends. */
const spareSchemas: string[] = [];
/** How many tests each of this process's schemas served: a schema serves at most MAX_USES (dead rows pile up: nothing vacuums them). */
const uses = new Map<string, number>();
const MAX_USES = 25;

/**
 * Empties `schema` to the template's rows and keeps it for the next test when its catalogue is the
 * template's (a test that altered a table, made a trigger or refreshed the planner's statistics leaves
 * another one), else drops it. Its rows go with triggers and foreign keys off (replica mode, the way
 * pg_restore loads data) and the template's come back as they are; its sequences start again.
 */
async function giveBack(url: string, template: PostgresTemplate, schema: string): Promise<void> {
  const served = (uses.get(schema) ?? 0) + 1;
  uses.set(schema, served);
  if (served < MAX_USES && (await catalogue(url, schema)) === template.catalogue) {
    try {
      await adminQuery(url, `BEGIN; SET LOCAL session_replication_role = replica; SET LOCAL search_path = ${schema};
        ${template.tables.map((table) => `DELETE FROM ${table};`).join(' ')}
        ${template.seeded.map((table) => `INSERT INTO ${table} SELECT * FROM ${template.schema}.${table};`).join(' ')}
        ${template.sequences.map(({ name, last, called }) => `SELECT setval('${name}', ${last}, ${called});`).join(' ')} COMMIT`);
      spareSchemas.push(schema);
      return;
    } catch {
      await adminQuery(url, 'ROLLBACK').catch(() => {});
    }
  }
  uses.delete(schema);
  await adminQuery(url, `DROP SCHEMA ${schema} CASCADE`);
}

/**
 * What of `schema`'s catalogue a test could change, as one hash with the schema's name taken out:
 * its relations (kind, owner, grants, columns and their defaults, whether the planner has statistics
 * of them), triggers (and whether enabled), constraints, indexes, functions and types. Not the
 * foreign keys' internal triggers: they are named by their oids, so no two schemas would ever match
 * (and every test after a process's first schema had worn out got a new one); the constraints say the same.
 */
async function catalogue(url: string, schema: string): Promise<string> {
  const rows = await adminQuery(url, `SELECT md5(replace(string_agg(x, ',' ORDER BY x), $1::text, '@')) AS hash FROM (
      SELECT 'r ' || c.relname || c.relkind::text || c.relowner::text || coalesce(c.relacl::text, '') || (c.reltuples >= 0) || c.relrowsecurity || c.relhasrules || ' ' ||
        coalesce((SELECT string_agg(a.attname || ':' || a.atttypid || a.attnotnull || coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ',' ORDER BY a.attnum)
          FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') AS x
        FROM pg_class c WHERE c.relnamespace = $1::regnamespace
      UNION ALL SELECT 't ' || c.relname || t.tgname || t.tgenabled::text || p.proname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid WHERE c.relnamespace = $1::regnamespace AND NOT t.tgisinternal
      UNION ALL SELECT 'c ' || conname || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = $1::regnamespace
      UNION ALL SELECT 'i ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = $1::regnamespace
      UNION ALL SELECT 'p ' || proname || md5(prosrc) FROM pg_proc WHERE pronamespace = $1::regnamespace
      UNION ALL SELECT 'y ' || typname FROM pg_type WHERE typnamespace = $1::regnamespace) AS catalogue`, [schema]);
  return String(rows[0]!.hash);
}

// The spare schemas go after the file's last test (run-tests.ts ends each file's process at once then).
after(async () => {
  const schemas = spareSchemas.splice(0);
  if (schemas.length > 0) await adminQuery(target as string, schemas.map((schema) => `DROP SCHEMA ${schema} CASCADE;`).join(' '));
});

let admin: Promise<{ client: pg.Client; socket: Socket }> | undefined;
let adminQueries = 0;

/**
 * A statement on this process's one connection for making and dropping schemas: a new connection costs
 * the server about 40 ms of CPU. Its socket holds the process open only while a statement runs.
 */
async function adminQuery(url: string, text: string, values?: unknown[]): Promise<Array<Record<string, unknown>>> {
  admin ??= (async () => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => (admin = undefined));
    await client.connect();
    return { client, socket: (client as unknown as { connection: { stream: Socket } }).connection.stream };
  })();
  const { client, socket } = await admin;
  if (adminQueries++ === 0) socket.ref();
  try {
    const result = (await client.query(text, values)) as pg.QueryResult<Record<string, unknown>> | Array<pg.QueryResult<Record<string, unknown>>>;
    return Array.isArray(result) ? [] : result.rows;
  } finally {
    if (--adminQueries === 0) socket.unref();
  }
}

let sqliteTemplate: Promise<string> | undefined;
let postgresTemplate: Promise<PostgresTemplate> | undefined;

interface PostgresTemplate {
  schema: string;
  /** Its `pg_dump`, psql's own commands taken out. */
  dump: string;
  tables: string[];
  /** The tables that hold rows in the template (the migrations' seeds). */
  seeded: string[];
  /** Each sequence as the template has it. */
  sequences: Array<{ name: string; last: string; called: boolean }>;
  /** The catalogue() of a schema made from the dump, once the first is made. */
  catalogue?: string;
}

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
async function migratedPostgresTemplate(url: string): Promise<PostgresTemplate> {
  const schema = `cmi_template_${codeHash(new URL('../../src/db/', import.meta.url).pathname)}`;
  const kept = join(tmpdir(), `${schema}-${createHash('sha256').update(url).digest('hex').slice(0, 8)}.sql`);
  return withAdmin(url, async (admin) => {
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
    const tables = (await admin.query<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY 1', [schema])).rows.map((row) => row.name);
    const seeded: string[] = [];
    for (const table of tables) if ((await admin.query(`SELECT 1 FROM ${schema}.${table} LIMIT 1`)).rowCount !== 0) seeded.push(table);
    const sequences: PostgresTemplate['sequences'] = [];
    for (const { name } of (await admin.query<{ name: string }>('SELECT sequencename AS name FROM pg_sequences WHERE schemaname = $1 ORDER BY 1', [schema])).rows) {
      const { last, called } = (await admin.query<{ last: string; called: boolean }>(`SELECT last_value::text AS last, is_called AS called FROM ${schema}.${name}`)).rows[0]!;
      sequences.push({ name, last, called });
    }
    return { schema, dump: readFileSync(kept, 'utf8'), tables, seeded, sequences };
  });
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
