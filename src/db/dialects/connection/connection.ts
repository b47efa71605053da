import type { Kysely } from 'kysely';
import type { WriteCounter } from '../change-notifications/write-counter.js';
import type { DataVersions } from '../change-notifications/change-notifications.js';

export interface PoolSettings {
  /** Connections per process (PostgreSQL; SQLite has one). */
  size: number;
  /** Longest a statement may run before the database cancels it, in milliseconds (PostgreSQL). */
  statementTimeoutMs: number;
  /** Time each query for the metrics (PostgreSQL; docs/operations.md#metrics); off, no query is timed. */
  timeQueries?: boolean;
}

export interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
}

/** Connections to one database, as its connector opened them, for tables of the shape `DB`. */
export interface Connection<DB> {
  readonly db: Kysely<DB>;
  /** For each kind of cached data, a token that moves when it changes, in any process. */
  dataVersions: DataVersions;
  close: () => Promise<void>;
  /** Connections of the pool open, idle and waited for (SQLite: its one connection, in use or idle, and the queries waiting for it). */
  poolUse?: () => PoolUse;
  /** With `timeQueries`: tells `observer` each query's duration, in seconds. */
  onQueryTime?: (observer: (seconds: number) => void) => void;
}

export interface OpenOptions {
  /** Do not create a database that is not there (DatabaseMissing instead). */
  mustExist?: boolean;
  /**
   * The connection serves requests (\`cmi serve\`): SQLite copies its WAL into the database from a
   * thread of its own (sqlite-checkpointer.ts), not from the event loop. Nothing on PostgreSQL.
   */
  serving?: boolean;
}

/**
 * Opens one database (its file or URL given when the connector was made), keeping a sick database
 * from hanging the server: sqlite-driver.ts waits for another process's lock between tries,
 * postgres-pool.ts bounds every query on the client side; both answer ServiceUnavailable (503).
 */
export interface Connector {
  /**
   * Opens the database; `writes` counts this process's own writes, part of the data version. With
   * `mustExist`, a database that is not there is not created: DatabaseMissing (SQLite: no file; a
   * PostgreSQL database is never created by connecting); `serving`: see OpenOptions.
   */
  open<DB>(pool: PoolSettings, writes: WriteCounter, options?: OpenOptions): Connection<DB>;
}

/** The database asked for with `mustExist` is not there; `where` is its absolute path. */
export class DatabaseMissing extends Error {
  constructor(readonly where: string) {
    super(`no database at ${where}`);
  }
}
