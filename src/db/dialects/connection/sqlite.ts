import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { WriteCounter } from '../change-notifications/write-counter.js';
import { sqliteDataVersions } from '../change-notifications/sqlite.js';
import { addUnicodeLower } from '../text/sqlite.js';
import { type Connection, type Connector, DatabaseMissing, type PoolSettings } from './connection.js';
import { SqliteDriver } from './sqlite-driver.js';
import { withStatementCache } from './sqlite-statement-cache.js';

/** SQLite, embedded, in the file at `path`: one connection a process, in WAL mode. */
export function sqliteConnector(path: string): Connector {
  return {
    open<DB>(pool: PoolSettings, writes: WriteCounter, { mustExist = false } = {}): Connection<DB> {
      // Opening a file that is not there creates it (and its folder, here): only when asked to.
      if (mustExist && !existsSync(path)) throw new DatabaseMissing(path);
      if (!mustExist) mkdirSync(dirname(path), { recursive: true });
      const sqlite = new SQLite(path, { fileMustExist: mustExist });
      // WAL lets readers run while a writer commits. Opening may meet another process's lock (it is
      // setting up WAL): that wait is the one synchronous one, at start, bounded by busy_timeout.
      sqlite.pragma(`busy_timeout = ${pool.statementTimeoutMs}`);
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
      sqlite.pragma('foreign_keys = ON');
      // SQLite's lower() folds ASCII letters only; the error list's `q` needs every letter folded.
      addUnicodeLower(sqlite);
      // From here on nothing waits for a lock synchronously: SqliteDriver waits between tries instead,
      // for up to the statement timeout, so the event loop keeps serving (docs/operations.md).
      sqlite.pragma('busy_timeout = 0');
      const driver = new SqliteDriver(withStatementCache(sqlite), pool.statementTimeoutMs);
      const db = new Kysely<DB>({
        plugins: [writes],
        dialect: {
          createAdapter: () => new SqliteAdapter(),
          createDriver: () => driver,
          createIntrospector: (kysely) => new SqliteIntrospector(kysely),
          createQueryCompiler: () => new SqliteQueryCompiler(),
        },
      });
      return {
        db,
        dataVersions: sqliteDataVersions(sqlite, writes),
        close: () => db.destroy(),
      };
    },
  };
}
