import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { type DialectName, migrationSchema } from './dialect.js';
import { allMigrations } from './migrations/index.js';
import { changeListener } from './change-listener.js';
import { withStatementCache } from './sqlite-statement-cache.js';
import type { Schema } from './schema.js';
import { WriteCounter } from './write-counter.js';

export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: DialectName;
  /**
   * A token that changes whenever anything in the database changes, from this process or any other,
   * read without waiting; undefined where the database offers no such signal (then nothing is cached).
   */
  dataVersion(): string | undefined;
  close(): Promise<void>;
}

export type DatabaseLocation = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

export interface PoolSettings {
  /** Connections per process (PostgreSQL). */
  size: number;
  /** Longest a statement may run before PostgreSQL cancels it, in milliseconds. */
  statementTimeoutMs: number;
}

/**
 * `sqlite:<path>` (relative to the working directory) or `postgres://user@host:port/db`
 * (`postgresql://` too). Throws with a readable reason otherwise.
 */
export function parseDatabaseUrl(url: string): DatabaseLocation {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new Error('a sqlite: URL needs a file path, e.g. sqlite:./data/cmi.sqlite3');
    return { dialect: 'sqlite', path: resolve(path) };
  }
  if (/^postgres(ql)?:\/\/./.test(url)) return { dialect: 'postgres', url };
  throw new Error('must start with sqlite: or postgres:// (e.g. sqlite:./data/cmi.sqlite3)');
}

/** The URL fit to print: a PostgreSQL password is masked. */
export function displayDatabaseUrl(url: string): string {
  if (!/^postgres(ql)?:\/\//.test(url)) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** How stale this process's view of other processes' SQLite writes may get, in milliseconds. */
const OTHER_PROCESS_CHECK_MS = 1;

const DEFAULT_POOL: PoolSettings = { size: 10, statementTimeoutMs: 5000 };

export function openDatabase(url: string, pool: PoolSettings = DEFAULT_POOL): Database {
  const location = parseDatabaseUrl(url);
  if (location.dialect === 'postgres') {
    const writes = new WriteCounter();
    // Connected on first use: commands that only write (migrate, users ...) never listen.
    let listener: ReturnType<typeof changeListener> | undefined;
    const connections = new pg.Pool({
      connectionString: location.url,
      max: pool.size,
      statement_timeout: pool.statementTimeoutMs,
      connectionTimeoutMillis: 5000,
    });
    // An idle connection the server ends (restart, failover) is dropped by the pool; without a
    // listener its error would end the process. The next query opens a new connection.
    connections.on('error', () => {});
    const db = new Kysely<Schema>({ plugins: [writes], dialect: new PostgresDialect({ pool: connections }) });
    return {
      db,
      dialect: 'postgres',
      dataVersion: () => {
        listener ??= changeListener(location.url);
        const changes = listener.version();
        return changes === undefined ? undefined : `${changes}:${writes.count}`;
      },
      close: async () => {
        await listener?.close();
        await db.destroy();
      },
    };
  }
  mkdirSync(dirname(location.path), { recursive: true });
  const sqlite = new SQLite(location.path);
  // WAL lets readers run while a writer commits; busy_timeout makes concurrent writers (the CLI
  // next to a running server) wait instead of failing.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const writes = new WriteCounter();
  const db = new Kysely<Schema>({ plugins: [writes], dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  // PRAGMA data_version moves when another connection (process) commits. Reading it takes file-lock
  // system calls, so it is read at most once a millisecond: another process's write is seen within
  // 1 ms; this process's own writes are counted by `writes` at once.
  const otherWrites = sqlite.prepare('PRAGMA data_version').pluck();
  let other = 0;
  let checkedAt = -Infinity;
  // The version string is made again only when a count moved, not on every call.
  let version = '';
  let versionOther = -1;
  let versionOwn = -1;
  return {
    db,
    dialect: 'sqlite',
    dataVersion: () => {
      const now = performance.now();
      if (now - checkedAt >= OTHER_PROCESS_CHECK_MS) {
        other = otherWrites.get() as number;
        checkedAt = now;
      }
      if (versionOther !== other || versionOwn !== writes.count) {
        [versionOther, versionOwn] = [other, writes.count];
        version = `${other}:${writes.count}`;
      }
      return version;
    },
    close: () => db.destroy(),
  };
}

async function migratorFor(database: Database): Promise<Migrator> {
  return new Migrator({
    db: database.db,
    migrationTableSchema: await migrationSchema(database.dialect, database.db),
    provider: { getMigrations: async () => allMigrations(database.dialect) },
  });
}

/** Names of the migrations this version of cmi has that the database has not applied. */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const migrations = await (await migratorFor(database)).getMigrations();
  return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const migrator = await migratorFor(database);
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
