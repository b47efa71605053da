import { DEFAULT_MIGRATION_TABLE, Kysely, Migrator, sql } from 'kysely';
import { dialectFor } from './database-url.js';
import type { DataVersions } from './dialects/change-notifications/change-notifications.js';
import type { OpenOptions, PoolSettings, PoolUse } from './dialects/connection/connection.js';
import type { Dialect } from './dialects/dialect.js';
import { MIGRATION_NAMES } from './migrations/names.js';
import type { Schema } from './schema.js';
import { type CachedData, WriteCounter } from './dialects/change-notifications/write-counter.js';
import { DatabaseUnavailable } from './dialects/connection/database-unavailable.js';

export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: Dialect;
  /** Tokens that move when cached data changes, in any process (Connection.dataVersions). */
  dataVersions: DataVersions;
  /**
   * Moves `data`'s version once a transaction that wrote it has ended. Its statements moved it as
   * they completed, before the commit, while another connection (PostgreSQL) could still read the
   * data as it was and keep that page under the moved version (docs/architecture.md#how-cached-pages-stay-right).
   */
  transactionEnded: (data: CachedData) => void;
  /**
   * Runs `work` with its writes to `data` kept from `data`'s version; `settle` then says whether it
   * told the caches itself what they changed, or they move the version as usual (WriteCounter.withheld).
   */
  withheld: <T>(data: CachedData, work: () => Promise<T>, settle: (answer: T) => boolean) => Promise<T>;
  close: () => Promise<void>;
  /** The connection pool's use now (SQLite: its one connection; docs/operations.md#metrics). */
  poolUse?: () => PoolUse;
  /** Each query's duration, in seconds, to `observer` (PostgreSQL, with the metrics on). */
  onQueryTime?: (observer: (seconds: number) => void) => void;
}

export { DatabaseMissing } from './dialects/connection/connection.js';

/**
 * Opens the database `databaseUrl` names (a Config will do); nothing is read until it is used. A SQLite
 * file that is not there is created, unless `mustExist` (then DatabaseMissing). `serving`: the
 * database of \`cmi serve\` (OpenOptions).
 */
export function openDatabase({ databaseUrl, pool }: { databaseUrl: string; pool: PoolSettings }, options: OpenOptions = {}): Database {
  const dialect = dialectFor(databaseUrl);
  const writes = new WriteCounter();
  const connection = dialect.connection.open<Schema>(pool, writes, options);
  return {
    db: connection.db,
    dialect,
    dataVersions: connection.dataVersions,
    transactionEnded: (data) => writes.ended(data),
    withheld: (data, work, settle) => writes.withheld(data, work, settle),
    close: connection.close,
    ...(connection.poolUse ? { poolUse: connection.poolUse } : {}),
    ...(connection.onQueryTime ? { onQueryTime: connection.onQueryTime } : {}),
  };
}

/** kysely reports a failed migration as `unknown`; whatever it is, it is thrown as an Error. */
const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

async function migratorFor(database: Database): Promise<Migrator> {
  // Loaded only when asked for: a start with nothing to apply reads the names alone (appliedMigrations).
  const { allMigrations } = await import('./migrations/index.js');
  return new Migrator({
    db: database.db,
    migrationTableSchema: await database.dialect.migrations.bookkeepingSchema(database.db),
    provider: { getMigrations: () => Promise.resolve(allMigrations(database.dialect)) },
  });
}

/**
 * The names of the migrations the database has applied, from kysely's own table (in the database's
 * schema, which the Migrator keeps it in: bookkeepingSchema); none when cmi never migrated it. Read
 * without loading a migration: a start that finds nothing to apply loads none of them
 * (docs/operations.md#start-up).
 */
async function appliedMigrations(database: Database): Promise<Set<string>> {
  const { db, dialect } = database;
  if (!(await dialect.catalog.tableNames(db as unknown as Kysely<unknown>)).includes(DEFAULT_MIGRATION_TABLE)) return new Set();
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)}`.execute(db);
  return new Set(rows.map((row) => row.name));
}

/** Names of the migrations this version of cmi has that the database has not applied. */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const applied = await appliedMigrations(database);
  return MIGRATION_NAMES.filter((name) => !applied.has(name));
}

export interface SchemaState {
  /** The last migration the database has applied (its schema version); undefined when cmi never migrated it. */
  version: string | undefined;
  /** The migrations this version of cmi has that the database has not applied. */
  pending: string[];
  /** The last migration this version of cmi has: the schema version it needs. */
  latest: string;
}

/** The database's schema version and what it lacks, reading only (docs/operations.md#know-what-runs). */
export async function schemaState(database: Database): Promise<SchemaState> {
  const applied = await appliedMigrations(database);
  return {
    version: MIGRATION_NAMES.filter((name) => applied.has(name)).at(-1),
    pending: MIGRATION_NAMES.filter((name) => !applied.has(name)),
    latest: MIGRATION_NAMES.at(-1) ?? '',
  };
}

/** Whether cmi has ever migrated the database (its tables are there), reading only. */
export async function isMigrated(database: Database): Promise<boolean> {
  const applied = await appliedMigrations(database);
  return MIGRATION_NAMES.some((name) => applied.has(name));
}

/**
 * How long a migration run waits for the lock it takes (another process migrating, or a backup or a
 * sqlite3 shell holding the database) before the start fails: each try waits up to the statement
 * timeout, then the run is tried again from the start
 * (docs/operations.md#migrations-run-one-at-a-time).
 */
export const MIGRATION_LOCK_WAIT_MS = 10 * 60_000;

/** Pause between two tries of a migration run that found the lock held. */
const MIGRATION_RETRY_PAUSE_MS = 100;

/** The database gave up waiting for a lock (SQLite's write lock; PostgreSQL's advisory lock, cancelled by statement_timeout, or cmi's own bound a second later). */
const waitedForLock = (error: unknown): boolean =>
  error instanceof DatabaseUnavailable &&
  (error.reason === 'the database is locked by another process' || error.reason === 'the database did not answer in time');

/**
 * Runs `run`, a migration run, again for as long as it only found its lock held, up to `waitMs`.
 * The run reads what is applied once it holds the lock, so a try again after another process
 * migrated finds nothing left to do. `onWait` hears once that it waits.
 */
async function whileLocked<T>(run: () => Promise<T>, waitMs: number, onWait?: (line: string) => void): Promise<T> {
  const deadline = performance.now() + waitMs;
  for (let tries = 1; ; tries++) {
    try {
      return await run();
    } catch (error) {
      if (!waitedForLock(error) || performance.now() >= deadline) throw error;
      if (tries === 1) onWait?.('cmi: waiting for the database: another process is migrating it or holds its lock');
      await new Promise((resolve) => setTimeout(resolve, MIGRATION_RETRY_PAUSE_MS));
    }
  }
}

export interface MigrateOptions {
  /** How long to wait for the migrations' lock in all (MIGRATION_LOCK_WAIT_MS). */
  lockWaitMs?: number;
  /** Told once when the lock is held by another process and the run waits for it. */
  onWait?: (line: string) => void;
}

/**
 * Applies every pending migration; returns the names applied. Safe to run in several processes at
 * once: the run takes a lock and reads what is applied only once it holds it (on SQLite `begin
 * immediate`, connection/sqlite.ts; on PostgreSQL kysely's advisory lock), so one process applies
 * them and the others find them applied (docs/operations.md#migrations-run-one-at-a-time).
 */
export async function migrateToLatest(database: Database, options: MigrateOptions = {}): Promise<string[]> {
  // Every migration applied, and none this version does not know (which the Migrator refuses): nothing
  // to do, no lock taken. Otherwise the run below reads them again once it holds the lock.
  const applied = await appliedMigrations(database);
  if (applied.size === MIGRATION_NAMES.length && MIGRATION_NAMES.every((name) => applied.has(name))) return [];
  const migrator = await migratorFor(database);
  const results = await whileLocked(
    async () => {
      const { error, results } = await migrator.migrateToLatest();
      if (error) throw asError(error);
      return results ?? [];
    },
    options.lockWaitMs ?? MIGRATION_LOCK_WAIT_MS,
    options.onWait,
  );
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Applies the migrations up to and including `name`, as an older cmi left the database (tests of upgrades). */
export async function migrateTo(database: Database, name: string): Promise<void> {
  const { error } = await (await migratorFor(database)).migrateTo(name);
  if (error) throw asError(error);
}

/**
 * Applies the migrations up to and including `name` (every pending one without it) on `conn`, a
 * connection inside a transaction its caller holds (Catalog.inOneTransaction): the migrations are part
 * of that transaction and go with it if it rolls back (a restore, docs/operations.md#backup-and-restore).
 * Returns the names applied.
 */
export async function migrateWithin(database: Database, conn: Kysely<unknown>, name?: string): Promise<string[]> {
  const { allMigrations } = await import('./migrations/index.js');
  const migrator = new Migrator({
    db: conn,
    // The caller's transaction is the run's: kysely begins none of its own.
    disableTransactions: true,
    migrationTableSchema: await database.dialect.migrations.bookkeepingSchema(conn),
    provider: { getMigrations: () => Promise.resolve(allMigrations(database.dialect)) },
  });
  const { error, results } = name === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(name);
  if (error) throw asError(error);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
