import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { type CreateTableBuilder, Kysely, sql, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { Schema } from '../schema.js';
import type { CachedData, WriteCounter } from '../write-counter.js';
import type { Connection, Dialect } from './dialect.js';
import { SqliteDriver } from './sqlite-driver.js';
import { withStatementCache } from './sqlite-statement-cache.js';

/** How stale this process's view of other processes' writes may get, in milliseconds. */
const OTHER_PROCESS_CHECK_MS = 1;

/** SQLite, embedded: one connection a process, in WAL mode. */
export function sqliteDialect(path: string): Dialect {
  return {
    name: 'sqlite',
    target: path,
    choose: (variants) => variants.sqlite,
    lowerFunction: 'unicode_lower',

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
      sqlite.function('unicode_lower', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? text.toLowerCase() : text));
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

    migrationSchema: () => Promise.resolve(undefined),

    /**
     * kysely runs SQLite migrations outside a transaction (its adapter has supportsTransactionalDdl
     * false), so this opens one. Its first write takes the database's one write lock until it commits.
     */
    atomically: (db, build) => db.transaction().execute(build),

    addIdColumn: <T extends string>(table: CreateTableBuilder<T, never>) =>
      table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement()),

    // The table is its primary key, so a run of blocks is read as one range.
    keyOrderedTable: 'without rowid',

    /** `UNIQUE constraint failed: users.login` -> `login`. */
    uniqueViolationColumn(error) {
      if (!(error instanceof Error) || (error as { code?: unknown }).code !== 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
      return /UNIQUE constraint failed: \w+\.(\w+)/.exec(error.message)?.[1];
    },

    // One writer at a time already: a transaction that checks for another administrator cannot race one.
    serializeAdministratorChanges: async () => {},

    // Other processes read PRAGMA data_version (open() above): nothing to create.
    createChangeNotifications: async () => {},
    createChangeNotificationFunction: async () => {},
    dropChangeNotifications: async () => {},

    /**
     * An FTS5 trigram index of the folded class and message (case-sensitive: they are folded already,
     * by the same function as the list's `q`), contentless: it keeps the index only, not a second copy
     * of the text. Triggers keep it in step; an upsert that leaves the text as it was changes nothing.
     */
    async createErrorSearch(db, migration) {
      if (migration !== '008') return;
      const run = (statement: string) => sql.raw(statement).execute(db);
      await run(`create virtual table error_search using fts5(error_class, message, content='', contentless_delete=1, tokenize='trigram case_sensitive 1')`);
      const add = (row: 'new' | 'old') => `insert into error_search (rowid, error_class, message) values (${row}.id, unicode_lower(${row}.error_class), unicode_lower(${row}.message));`;
      const remove = (row: 'new' | 'old') => `delete from error_search where rowid = ${row}.id;`;
      await run(`create trigger infrastructure_errors_search_insert after insert on infrastructure_errors begin ${add('new')} end`);
      await run(`create trigger infrastructure_errors_search_delete after delete on infrastructure_errors begin ${remove('old')} end`);
      await run(`create trigger infrastructure_errors_search_update after update of error_class, message on infrastructure_errors
        when old.error_class <> new.error_class or old.message <> new.message begin ${remove('old')} ${add('new')} end`);
      await run('insert into error_search (rowid, error_class, message) select id, unicode_lower(error_class), unicode_lower(message) from infrastructure_errors');
    },

    // A trigram index answers texts of 3 characters or more, as a phrase: the trigrams in a row.
    // SQLite's planner cannot tell how many that is, so many matches are left to the walk.
    errorIdsContaining: (folded, few) =>
      (!few || [...folded].length < 3 ? undefined : sql<{ id: number }>`select rowid as id from error_search where error_search match ${`"${folded.replaceAll('"', '""')}"`}`),

    // cmi never runs ANALYZE on SQLite, so its planner keeps no statistics to refresh.
    refreshStatistics: async () => {},
  };
}
