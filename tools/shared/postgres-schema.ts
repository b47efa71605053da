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
