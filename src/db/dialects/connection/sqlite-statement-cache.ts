import type SQLite from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/**
 * The SQLite connection as kysely sees it, preparing each distinct SQL text once. kysely prepares
 * a statement for every query it runs, and preparing costs more than running for most of cmi's
 * queries (a page's block seek: about 300 µs to prepare, 60 µs to run). Bounded: beyond
 * `maxStatements` texts the oldest is dropped. A statement is never used by two queries at once:
 * kysely runs one query at a time on this connection, each to completion.
 */
export function withStatementCache(sqlite: SQLite.Database, maxStatements = 500): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = sqlite.prepare(sql);
        if (statements.size >= maxStatements) statements.delete(statements.keys().next().value as string);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
