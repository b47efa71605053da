import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A database of its own, and how to remove it (the tests' and the benchmarks' alike). */
export interface FreshDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A new, empty PostgreSQL schema on the database `url` names, and the URL that puts it on the search path. */
export async function postgresSchema(url: string, prefix: string): Promise<FreshDatabase> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  return {
    url: schemaUrl(url, schema),
    async drop() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

/** The URL of the database `url` names with `schema` on the search path. */
export function schemaUrl(url: string, schema: string): string {
  const separator = url.includes('?') ? '&' : '?';
  return `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/**
 * VACUUM of the system catalogue of the database `url` names: each test schema made and dropped leaves
 * its catalogue rows dead (some 150 a schema), and on a server with autovacuum off (as CI's) nothing
 * else takes them away, so every later run read more of them: a whole suite's pass left pg_attribute at
 * 1.3 million dead rows, and each catalogue scan, schema copy and drop grew slower run after run
 * (docs/architecture.md#running-the-tests). A role that owns no catalogue vacuums nothing, with a warning.
 */
export async function vacuumCatalogue(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>("SELECT 'pg_catalog.' || quote_ident(relname) AS name FROM pg_class WHERE relnamespace = 'pg_catalog'::regnamespace AND relkind = 'r' AND NOT relisshared ORDER BY 1");
    client.on('notice', () => {});
    await client.query(`VACUUM ${rows.map((row) => row.name).join(', ')}`);
  } finally {
    await client.end();
  }
}

/**
 * A test schema's name: `cmi_test_<pid>_<random>`, the pid of the test process that made it, so that
 * a pass can drop what a killed process left (dropOrphanedTestSchemas).
 */
export const testSchemaName = (random: string): string => `cmi_test_${process.pid}_${random}`;

/**
 * Drops the test schemas whose process is gone (killed before its `after` dropped them): left, each
 * holds a copy of every table, and the catalogue they swell slows every later pass
 * (docs/architecture.md#running-the-tests). Schemas of live processes (another pass, another
 * worktree's tests) stay. Answers how many were dropped.
 */
export async function dropOrphanedTestSchemas(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>("SELECT nspname AS name FROM pg_namespace WHERE nspname ~ '^cmi_test_[0-9]+_[0-9a-f]+$'");
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'EPERM';
      }
    };
    const orphaned = rows.map((row) => row.name).filter((name) => !alive(Number(name.split('_')[2])));
    client.on('notice', () => {});
    for (const name of orphaned) await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    return orphaned.length;
  } finally {
    await client.end();
  }
}
