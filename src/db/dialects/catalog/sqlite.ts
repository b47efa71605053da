import { sql } from 'kysely';
import { type Catalog, inTransactionBegunWith } from './catalog.js';

export const sqliteCatalog: Catalog = {
  async tableNames(db) {
    const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db);
    return rows.map((row) => row.name);
  },

  async columnNames(db, table) {
    const { rows } = await sql<{ name: string }>`select name from pragma_table_info(${table}) order by cid`.execute(db);
    return rows.map((row) => row.name);
  },

  /** In WAL mode a transaction's first read fixes what all its reads see; writers go on meanwhile. */
  snapshot: (db, read) => db.transaction().execute(read),

  /** `begin immediate`, as SqliteDriver begins a transaction: the write lock is held from the first statement. */
  inOneTransaction: (db, work) => inTransactionBegunWith(db, sql`begin immediate`, work),

  /**
   * SQLite checks foreign keys on a drop (an implicit delete), and `pragma foreign_keys` does nothing
   * inside a transaction: the tables are dropped in the order given, which puts children first.
   */
  async dropTables(db, tables) {
    for (const table of tables) await sql`drop table if exists ${sql.table(table)}`.execute(db);
  },

  /** sqlite_sequence follows the largest id inserted by itself. */
  continueIds: () => Promise.resolve(),
};
