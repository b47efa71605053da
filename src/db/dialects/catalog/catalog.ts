import { type Kysely, type RawBuilder, sql } from 'kysely';

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
  /**
   * Runs `work` on one connection inside one transaction that may change the schema too (both
   * databases' DDL is transactional), committed only once `work` returns: an error, or the process
   * dying, leaves the database as it was (a restore, docs/operations.md#backup-and-restore). SQLite
   * holds its write lock from the start; PostgreSQL reads at repeatable read. `work`'s db is a
   * Kysely, not a Transaction, so that kysely's Migrator runs on it (db/database.ts migrateWithin).
   */
  inOneTransaction<T>(db: Kysely<unknown>, work: (conn: Kysely<unknown>) => Promise<T>): Promise<T>;
  /** Drops `tables` and their triggers, whatever refers to them; inside inOneTransaction, children before their parents. */
  dropTables(db: Kysely<unknown>, tables: readonly string[]): Promise<void>;
  /** After rows were inserted with their ids: new rows of `table` get ids after the largest. */
  continueIds(db: Kysely<unknown>, table: string): Promise<void>;
}

/**
 * Catalog.inOneTransaction's shape for both databases: `begin` (the dialect's own), `work` on that one
 * connection, then commit; on any error a rollback (a failed commit, a deferred constraint, leaves the
 * transaction open) and the error itself.
 */
export const inTransactionBegunWith = <T>(db: Kysely<unknown>, begin: RawBuilder<unknown>, work: (conn: Kysely<unknown>) => Promise<T>): Promise<T> =>
  db.connection().execute(async (conn) => {
    await begin.execute(conn);
    try {
      const result = await work(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (error) {
      await sql`rollback`.execute(conn).catch(() => {});
      throw error;
    }
  });
