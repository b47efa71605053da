import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import { DatabaseUnavailable, type DatabaseUnavailableReason } from './database-unavailable.js';
import type { SqliteConnectionHandle } from './sqlite-statement-cache.js';

/** Longest pause between two tries for a lock another process holds, in milliseconds. */
const MAX_PAUSE_MS = 50;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** SQLite's answer when another connection holds the lock a statement needs. */
export const isLocked = (error: unknown): boolean => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
};

/** What a SQLite error means for the client when the database cannot serve (full, read-only, unreadable). */
function unavailableReason(error: unknown): DatabaseUnavailableReason | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  if (code === 'SQLITE_FULL') return 'the database is full';
  if (code.startsWith('SQLITE_READONLY')) return 'the database refuses writes';
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN')) return 'the database cannot be read or written';
  return undefined;
}

/** One holder of the connection at a time; kysely queues on it, and a statement waiting for a lock lets go of it. */
class ConnectionMutex {
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;
  /** Queries waiting for the connection (the metrics' pool gauge: docs/operations.md#metrics). */
  waiting = 0;

  get held(): boolean {
    return this.#held !== undefined;
  }

  async lock(): Promise<void> {
    if (this.#held !== undefined) {
      this.waiting += 1;
      try {
        while (this.#held !== undefined) await this.#held;
      } finally {
        this.waiting -= 1;
      }
    }
    this.#held = new Promise((resolve) => (this.#release = resolve));
  }

  unlock(): void {
    const release = this.#release;
    this.#held = undefined;
    this.#release = undefined;
    release?.();
  }
}

class SqliteConnection implements DatabaseConnection {
  /** Inside `begin immediate` .. `commit`: the write lock is held, and so is the connection. */
  inTransaction = false;

  constructor(
    private readonly db: SqliteConnectionHandle,
    private readonly mutex: ConnectionMutex,
    private readonly lockTimeoutMs: number,
  ) {}

  private run<R>(compiled: CompiledQuery): QueryResult<R> {
    const statement = this.db.prepare(compiled.sql);
    if (statement.reader) return { rows: statement.all(compiled.parameters) as R[] };
    const { changes, lastInsertRowid } = statement.run(compiled.parameters);
    return {
      numAffectedRows: changes === undefined || changes === null ? undefined : BigInt(changes),
      insertId: lastInsertRowid === undefined || lastInsertRowid === null ? undefined : BigInt(lastInsertRowid),
      rows: [],
    };
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return Promise.resolve(this.run<R>(compiled));
    } catch (error) {
      return isLocked(error) ? this.waitForLock(compiled) : Promise.reject(asUnavailable(error));
    }
  }

  /**
   * Tries again, with pauses, until the lock is free or lockTimeoutMs has passed (then 503). The
   * event loop runs meanwhile, and outside a transaction the connection is free for other queries.
   */
  private async waitForLock<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const deadline = performance.now() + this.lockTimeoutMs;
    for (let wait = 1; ; wait = Math.min(wait * 2, MAX_PAUSE_MS)) {
      if (performance.now() >= deadline) throw new DatabaseUnavailable('the database is locked by another process', 1);
      const holding = this.inTransaction;
      if (!holding) this.mutex.unlock();
      await pause(Math.min(wait, Math.max(1, deadline - performance.now())));
      if (!holding) await this.mutex.lock();
      try {
        return this.run<R>(compiled);
      } catch (error) {
        if (!isLocked(error)) throw asUnavailable(error);
      }
    }
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('cmi does not stream SQLite queries');
  }
}

/** An error that means the database cannot serve now, as DatabaseUnavailable; anything else as it is. */
function asUnavailable(error: unknown): Error {
  const reason = unavailableReason(error);
  if (reason !== undefined) return new DatabaseUnavailable(reason, 5);
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * kysely's driver for one better-sqlite3 connection, except that nothing waits for a lock
 * synchronously: the connection runs with busy_timeout 0, and a statement that finds the database
 * locked by another process (a backup, a sqlite3 shell, `cmi migrate`) is tried again after a pause,
 * so the event loop keeps serving. Transactions start with `begin immediate`: they take the write
 * lock first, so no statement inside one has to wait. docs/operations.md#when-the-database-is-sick.
 */
export class SqliteDriver implements Driver {
  readonly #mutex = new ConnectionMutex();
  readonly #connection: SqliteConnection;

  constructor(private readonly db: SqliteConnectionHandle, lockTimeoutMs: number) {
    this.#connection = new SqliteConnection(db, this.#mutex, lockTimeoutMs);
  }

  /** The one connection as a pool of one: in use or idle, and the queries waiting for it. */
  use(): { total: number; idle: number; waiting: number } {
    return { total: 1, idle: this.#mutex.held ? 0 : 1, waiting: this.#mutex.waiting };
  }

  init(): Promise<void> {
    return Promise.resolve();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock();
    return this.#connection;
  }

  async beginTransaction(): Promise<void> {
    await this.#connection.executeQuery(CompiledQuery.raw('begin immediate'));
    this.#connection.inTransaction = true;
  }

  async commitTransaction(): Promise<void> {
    await this.#connection.executeQuery(CompiledQuery.raw('commit'));
    this.#connection.inTransaction = false;
  }

  /**
   * Rolls back, unless SQLite already has: after SQLITE_FULL (or an I/O error) in a statement or
   * the commit, SQLite may have rolled the whole transaction back itself, and a `rollback` then
   * fails with "cannot rollback - no transaction is active", an error kysely would throw in place of
   * the one that ended the transaction (a 500 where the full database is a 503:
   * docs/operations.md#when-the-database-is-sick).
   */
  async rollbackTransaction(): Promise<void> {
    try {
      if (this.db.inTransaction) await this.#connection.executeQuery(CompiledQuery.raw('rollback'));
    } finally {
      this.#connection.inTransaction = false;
    }
  }

  releaseConnection(): Promise<void> {
    this.#mutex.unlock();
    return Promise.resolve();
  }

  destroy(): Promise<void> {
    this.db.close();
    return Promise.resolve();
  }
}
