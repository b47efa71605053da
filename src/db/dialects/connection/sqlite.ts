import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { WriteCounter } from '../change-notifications/write-counter.js';
import { sqliteDataVersions } from '../change-notifications/sqlite.js';
import { addUnicodeLower } from '../text/sqlite.js';
import { type Connection, type Connector, DatabaseMissing, type OpenOptions, type PoolSettings } from './connection.js';
import { sqliteOpenFailure } from './connection-failure.js';
import { DatabaseUnavailable } from './database-unavailable.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import { isLocked, SqliteDriver } from './sqlite-driver.js';
import { withStatementCache } from './sqlite-statement-cache.js';

/**
 * kysely's SQLite adapter, except that kysely's Migrator runs a migration run in one transaction, as
 * it does on PostgreSQL: the driver begins it with `begin immediate`, so the run holds the
 * database's write lock from before it reads which migrations are applied until the last is
 * recorded, and a second process migrating at the same moment waits, then finds them applied
 * (docs/operations.md#migrations-run-one-at-a-time). SQLite's DDL is transactional; kysely's
 * adapter runs each migration apart, taking no lock, so two processes both read that nothing was
 * applied and the second died with `table "users" already exists`.
 */
class SqliteMigratingAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/** The page cache of a connection, in KiB as `cache_size` takes it (negative: a size, not a page count). */
export const SQLITE_CACHE_KIB = -65_536;

/** SQLite, embedded, in the file at `path`: one connection a process, in WAL mode. */
export function sqliteConnector(path: string): Connector {
  return {
    open<DB>(pool: PoolSettings, writes: WriteCounter, { mustExist = false, serving = false }: OpenOptions = {}): Connection<DB> {
      // Opening a file that is not there creates it (and its folder, here): only when asked to.
      if (mustExist && !existsSync(path)) throw new DatabaseMissing(path);
      let sqlite: SQLite.Database;
      try {
        if (!mustExist) mkdirSync(dirname(path), { recursive: true });
        sqlite = new SQLite(path, { fileMustExist: mustExist });
      } catch (error) {
        // One line with the path and what to check (docs/operations.md#when-the-database-cannot-be-reached).
        throw new DatabaseUnavailable('the database cannot be read or written', 5, sqliteOpenFailure(error, path), { cause: error });
      }
      // WAL lets readers run while a writer commits. Opening may meet another process's lock (it is
      // setting up WAL): that wait is the one synchronous one, at start, bounded by busy_timeout.
      sqlite.pragma(`busy_timeout = ${pool.statementTimeoutMs}`);
      // Switching a fresh file to WAL needs its exclusive lock, and SQLite refuses at once (no busy
      // handler) when another process is opening it too: tried again until busy_timeout has passed.
      for (const deadline = performance.now() + pool.statementTimeoutMs; ; ) {
        try {
          sqlite.pragma('journal_mode = WAL');
          break;
        } catch (error) {
          if (!isLocked(error) || performance.now() >= deadline) throw error;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        }
      }
      sqlite.pragma('synchronous = NORMAL');
      // The WAL is copied into the database (a checkpoint, with its syncs) once it holds 10,000 pages
      // (40 MB) rather than SQLite's 1,000: a page written by many commits (the counts, an index's
      // hot pages) is copied once for all of them, which makes a stream of error reports about a
      // third cheaper (docs/benchmarks.md#error-tracker). The WAL file keeps that size on disk.
      sqlite.pragma('wal_autocheckpoint = 10000');
      // Serving, the copying is done by a thread of its own, a little at a time (docs/architecture.md#sqlite-checkpoints):
      // the limit above is then only the fallback, should that thread fail or fall behind.
      const checkpointer = serving ? startCheckpointer(path) : undefined;
      sqlite.pragma('foreign_keys = ON');
      // A page cache of up to 64 MB (SQLite's default is 2 MB): on a tracker of 1,000,000 errors a
      // list's first visit reads its index ranges and rows from here, not through a read() of the
      // file each (docs/benchmarks.md#error-list-queries-first-visits). Memory a process may take, not
      // takes at once: pages are held as they are read.
      sqlite.pragma(`cache_size = ${SQLITE_CACHE_KIB}`);
      // SQLite's lower() folds ASCII letters only; the error list's `q` needs every letter folded.
      addUnicodeLower(sqlite);
      // From here on nothing waits for a lock synchronously: SqliteDriver waits between tries instead,
      // for up to the statement timeout, so the event loop keeps serving (docs/operations.md).
      sqlite.pragma('busy_timeout = 0');
      const driver = new SqliteDriver(withStatementCache(sqlite), pool.statementTimeoutMs);
      const db = new Kysely<DB>({
        plugins: [writes],
        dialect: {
          createAdapter: () => new SqliteMigratingAdapter(),
          createDriver: () => driver,
          createIntrospector: (kysely) => new SqliteIntrospector(kysely),
          createQueryCompiler: () => new SqliteQueryCompiler(),
        },
      });
      return {
        db,
        dataVersions: sqliteDataVersions(sqlite, writes),
        close: async () => {
          // The thread's connection first: the last one to close removes the WAL, having copied it.
          await checkpointer?.stop();
          await db.destroy();
        },
        poolUse: () => driver.use(),
      };
    },
  };
}
