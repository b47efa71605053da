import { sql } from 'kysely';
import type { Catalog } from './catalog.js';

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

  /** SQLite checks foreign keys on a drop (an implicit delete): off while dropping, outside any transaction. */
  async dropTables(db, tables) {
    await sql`pragma foreign_keys = off`.execute(db);
    try {
      for (const table of tables) await sql`drop table if exists ${sql.table(table)}`.execute(db);
    } finally {
      await sql`pragma foreign_keys = on`.execute(db);
    }
  },

  /** sqlite_sequence follows the largest id inserted by itself. */
  continueIds: () => Promise.resolve(),
};
