import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { Schema } from '../schema.js';
import type { CachedData, WriteCounter } from '../write-counter.js';
import type { Connection, Dialect } from './dialect.js';
import { SqliteDriver } from './connection/sqlite-driver.js';
import { withStatementCache } from './connection/sqlite-statement-cache.js';
import { sqliteConstraints } from './constraints/sqlite.js';
import { sqliteMigrations } from './migrations/sqlite.js';
import { sqliteStatistics } from './statistics/sqlite.js';
import { sqliteTables } from './tables/sqlite.js';
import { addUnicodeLower, sqliteText } from './text/sqlite.js';

/** How stale this process's view of other processes' writes may get, in milliseconds. */
const OTHER_PROCESS_CHECK_MS = 1;

/** SQLite, embedded: one connection a process, in WAL mode. */
export function sqliteDialect(path: string): Dialect {
  return {
    name: 'sqlite',
    target: path,
    choose: (variants) => variants.sqlite,
    text: sqliteText,
    constraints: sqliteConstraints,
    tables: sqliteTables,
    migrations: sqliteMigrations,
    statistics: sqliteStatistics,
    refreshStatistics: (db) => sqliteStatistics.refresh(db),

    open(pool, writes: WriteCounter): Connection {
      mkdirSync(dirname(path), { recursive: true });
      const sqlite = new SQLite(path);
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
      const db = new Kysely<Schema>({
        plugins: [writes],
        dialect: {
          createAdapter: () => new SqliteAdapter(),
          createDriver: () => driver,
          createIntrospector: (kysely) => new SqliteIntrospector(kysely),
          createQueryCompiler: () => new SqliteQueryCompiler(),
        },
      });
      // PRAGMA data_version moves when another connection (process) commits. Reading it takes file-lock
      // system calls, so it is read at most once a millisecond: another process's write is seen within
      // 1 ms; this process's own writes are counted by `writes` at once.
      const otherWrites = sqlite.prepare('PRAGMA data_version').pluck();
      let other = 0;
      let checkedAt = -Infinity;
      /** Another process's writes, whatever they changed; undefined while unreadable. */
      const othersCount = (): number | undefined => {
        const now = performance.now();
        if (now - checkedAt >= OTHER_PROCESS_CHECK_MS) {
          try {
            other = otherWrites.get() as number;
          } catch {
            // Unreadable for now (another process holds the database exclusively): cache nothing.
            return undefined;
          }
          checkedAt = now;
        }
        return other;
      };
      const versionOf = (data: CachedData) => {
        // The version string is made again only when a count moved, not on every call.
        let version = '';
        let versionOther = -1;
        let versionOwn = -1;
        return (): string | undefined => {
          const others = othersCount();
          if (others === undefined) return undefined;
          if (versionOther !== others || versionOwn !== writes.counts[data]) {
            versionOther = others;
            versionOwn = writes.counts[data];
            version = `${others}:${versionOwn}`;
          }
          return version;
        };
      };
      return {
        db,
        dataVersions: { users: versionOf('users'), tracker: versionOf('tracker') },
        close: () => db.destroy(),
      };
    },

    // Other processes read PRAGMA data_version (open() above): nothing to create.
    createChangeNotifications: async () => {},
    createChangeNotificationFunction: async () => {},
    dropChangeNotifications: async () => {},

  };
}
