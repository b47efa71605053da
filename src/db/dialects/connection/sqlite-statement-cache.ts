import type SQLite from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';
import { LRUCache } from 'lru-cache';

/** kysely's view of a SQLite connection, and whether a transaction is open on it (SQLite's own word). */
export interface SqliteConnectionHandle extends SqliteDatabase {
  readonly inTransaction: boolean;
}

/**
 * The SQLite connection as kysely sees it, preparing each distinct SQL text once. kysely prepares
 * a statement for every query it runs, and preparing costs more than running for most of cmi's
 * queries (a page's block seek: about 300 µs to prepare, 60 µs to run). Bounded (lru-cache): beyond
 * `maxStatements` texts the one used longest ago is dropped. A statement is never used by two queries at once:
 * kysely runs one query at a time on this connection, each to completion.
 */
export function withStatementCache(sqlite: SQLite.Database, maxStatements = 500): SqliteConnectionHandle {
  const statements = new LRUCache<string, SQLite.Statement>({ max: maxStatements });
  return {
    close: () => sqlite.close(),
    get inTransaction() {
      return sqlite.inTransaction;
    },
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
