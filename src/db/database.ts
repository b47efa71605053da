import { Kysely, Migrator } from 'kysely';
import { dialectFor } from './database-url.js';
import type { DataVersions } from './dialects/change-notifications/change-notifications.js';
import type { PoolSettings, PoolUse } from './dialects/connection/connection.js';
import type { Dialect } from './dialects/dialect.js';
import { allMigrations } from './migrations/index.js';
import type { Schema } from './schema.js';
import { type CachedData, WriteCounter } from './dialects/change-notifications/write-counter.js';

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
  close: () => Promise<void>;
  /** The connection pool's use now (PostgreSQL only; docs/operations.md#metrics). */
  poolUse?: () => PoolUse;
  /** Each query's duration, in seconds, to `observer` (PostgreSQL, with the metrics on). */
  onQueryTime?: (observer: (seconds: number) => void) => void;
}

export { DatabaseMissing } from './dialects/connection/connection.js';

/**
 * Opens the database `databaseUrl` names (a Config will do); nothing is read until it is used. A SQLite
 * file that is not there is created, unless `mustExist` (then DatabaseMissing).
 */
export function openDatabase({ databaseUrl, pool }: { databaseUrl: string; pool: PoolSettings }, options: { mustExist?: boolean } = {}): Database {
  const dialect = dialectFor(databaseUrl);
  const writes = new WriteCounter();
  const connection = dialect.connection.open<Schema>(pool, writes, options);
  return {
    db: connection.db,
    dialect,
    dataVersions: connection.dataVersions,
    transactionEnded: (data) => {
      writes.counts[data] += 1;
    },
    close: connection.close,
    ...(connection.poolUse ? { poolUse: connection.poolUse } : {}),
    ...(connection.onQueryTime ? { onQueryTime: connection.onQueryTime } : {}),
  };
}

/** kysely reports a failed migration as `unknown`; whatever it is, it is thrown as an Error. */
const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

async function migratorFor(database: Database): Promise<Migrator> {
  return new Migrator({
    db: database.db,
    migrationTableSchema: await database.dialect.migrations.bookkeepingSchema(database.db),
    provider: { getMigrations: () => Promise.resolve(allMigrations(database.dialect)) },
  });
}

/** Names of the migrations this version of cmi has that the database has not applied. */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const migrations = await (await migratorFor(database)).getMigrations();
  return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** Whether cmi has ever migrated the database (its tables are there), reading only. */
export async function isMigrated(database: Database): Promise<boolean> {
  return (await (await migratorFor(database)).getMigrations()).some((m) => m.executedAt !== undefined);
}

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const migrator = await migratorFor(database);
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw asError(error);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Applies the migrations up to and including `name`, as an older cmi left the database (tests of upgrades). */
export async function migrateTo(database: Database, name: string): Promise<void> {
  const { error } = await (await migratorFor(database)).migrateTo(name);
  if (error) throw asError(error);
}
