import type { Kysely } from 'kysely';
import type { Schema } from '../schema.js';
import type { WriteCounter } from '../write-counter.js';
import type { ChangeNotifications, DataVersions } from './change-notifications/change-notifications.js';
import type { Constraints } from './constraints/constraints.js';
import type { Migrations } from './migrations/migrations.js';
import type { PlannerStatistics } from './statistics/statistics.js';
import type { Tables } from './tables/tables.js';
import type { TextFunctions } from './text/text.js';

export type DialectName = 'sqlite' | 'postgres';

/**
 * One value for each database, such as a feature's SQL where the two differ; `Dialect.choose` takes
 * this database's. The feature states both, the db layer picks: nothing else asks which database it is on.
 */
export type PerDatabase<T> = Readonly<Record<DialectName, T>>;

export interface PoolSettings {
  /** Connections per process (PostgreSQL; SQLite has one). */
  size: number;
  /** Longest a statement may run before the database cancels it, in milliseconds (PostgreSQL). */
  statementTimeoutMs: number;
  /** Time each query for the metrics (PostgreSQL; docs/operations.md#metrics); off, no query is timed. */
  timeQueries?: boolean;
}

/** Connections to one database, as a dialect opened them. */
export interface Connection {
  readonly db: Kysely<Schema>;
  /** For each kind of cached data, a token that moves when it changes, in any process. */
  dataVersions: DataVersions;
  close: () => Promise<void>;
  /** Connections of the pool open, idle and waited for (PostgreSQL; SQLite has one connection, no pool). */
  poolUse?: () => PoolUse;
  /** With `timeQueries`: tells `observer` each query's duration, in seconds. */
  onQueryTime?: (observer: (seconds: number) => void) => void;
}

export interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema (migrations see none): these read no table of it
type AnyKysely = Kysely<any>;

/**
 * Every difference between SQLite and PostgreSQL, behind one interface with one implementation per
 * database (sqlite.ts, postgres.ts), picked once from DATABASE_URL (database-url.ts). Callers never
 * ask which database they are on. docs/architecture.md explains each part.
 */
export interface Dialect {
  readonly name: DialectName;
  /** The file path (SQLite) or the connection URL (PostgreSQL) this dialect opens. */
  readonly target: string;
  /** This database's variant of `variants`. */
  choose<T>(variants: PerDatabase<T>): T;
  /** Opens the database; `writes` counts this process's own writes, part of the data version. */
  open(pool: PoolSettings, writes: WriteCounter): Connection;
  /** Running migrations: where their bookkeeping lives, and running one atomically. */
  readonly migrations: Migrations;
  /** Comparing text: the lower() that folds every letter. */
  readonly text: TextFunctions;
  /** Table definitions: id columns, tables stored in key order. */
  readonly tables: Tables;
  /** Reading constraint errors: the column a unique violation names. */
  readonly constraints: Constraints;
  /** What migrations create so that other processes learn of changes to cached data. */
  readonly changeNotifications: ChangeNotifications;
  /** The query planner's statistics, refreshed after a bulk load. */
  readonly statistics: PlannerStatistics;
  /** `statistics.refresh`, under the name bench/datasets.ts calls (until bench/ calls `statistics.refresh`). */
  refreshStatistics(db: AnyKysely): Promise<void>;
}
