import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import type { DialectName } from './dialect.js';
import { allMigrations } from './migrations/index.js';
import type { Schema } from './schema.js';

export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: DialectName;
  close(): Promise<void>;
}

export type DatabaseLocation = { dialect: 'sqlite'; path: string };

/** `sqlite:<path>` (relative to the working directory). Throws with a readable reason otherwise. */
export function parseDatabaseUrl(url: string): DatabaseLocation {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new Error('a sqlite: URL needs a file path, e.g. sqlite:./data/cmi.sqlite3');
    return { dialect: 'sqlite', path: resolve(path) };
  }
  throw new Error('must start with sqlite: (e.g. sqlite:./data/cmi.sqlite3)');
}

export function openDatabase(url: string): Database {
  const location = parseDatabaseUrl(url);
  mkdirSync(dirname(location.path), { recursive: true });
  const sqlite = new SQLite(location.path);
  // WAL lets readers run while a writer commits; busy_timeout makes concurrent writers (the CLI
  // next to a running server) wait instead of failing.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => allMigrations(database.dialect) },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
