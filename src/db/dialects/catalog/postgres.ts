import { sql } from 'kysely';
import { type Catalog, inTransactionBegunWith } from './catalog.js';

export const postgresCatalog: Catalog = {
  async tableNames(db) {
    const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
    return rows.map((row) => row.name);
  },

  async columnNames(db, table) {
    const { rows } = await sql<{ name: string }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ${table} order by ordinal_position`.execute(db);
    return rows.map((row) => row.name);
  },

  /** Repeatable read: every statement of the transaction sees the snapshot its first one took. */
  snapshot: (db, read) => db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
    await sql`set transaction read only`.execute(trx);
    return read(trx);
  }),

  /** Repeatable read: what it reads first (the copy `--force` keeps) is one moment's database. */
  inOneTransaction: (db, work) => inTransactionBegunWith(db, sql`begin isolation level repeatable read`, work),

  async dropTables(db, tables) {
    if (tables.length > 0) await sql`drop table if exists ${sql.join(tables.map((table) => sql.table(table)))} cascade`.execute(db);
  },

  /** A table without a sequence on `id` (pg_get_serial_sequence is null) is left as it is. */
  async continueIds(db, table) {
    const { rows } = await sql<{ has: boolean }>`select exists (select 1 from information_schema.columns where table_schema = current_schema() and table_name = ${table} and column_name = 'id') as has`.execute(db);
    if (rows[0]?.has) await sql`select setval(pg_get_serial_sequence(${table}, 'id'), coalesce(max(id), 1), max(id) is not null) from ${sql.table(table)}`.execute(db);
  },
};
