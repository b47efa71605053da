import type { Kysely } from 'kysely';

/**
 * Reading and rebuilding the database's tables as a whole, for backups (docs/operations.md#backup-and-restore):
 * which tables and columns there are, one consistent read of all of them, dropping them, and where ids go on.
 */
export interface Catalog {
  /** The tables cmi's connection sees (PostgreSQL: its current schema). */
  tableNames(db: Kysely<unknown>): Promise<string[]>;
  /** A table's columns, in their order. */
  columnNames(db: Kysely<unknown>, table: string): Promise<string[]>;
  /** Runs `read` in one read-only transaction that sees the database at one moment while others write. */
  snapshot<T>(db: Kysely<unknown>, read: (trx: Kysely<unknown>) => Promise<T>): Promise<T>;
  /** Drops `tables` and their triggers, whatever refers to them. */
  dropTables(db: Kysely<unknown>, tables: readonly string[]): Promise<void>;
  /** After rows were inserted with their ids: new rows of `table` get ids after the largest. */
  continueIds(db: Kysely<unknown>, table: string): Promise<void>;
}
