import type { CreateTableBuilder } from 'kysely';
import type { Tables } from './tables.js';

export const sqliteTables: Tables = {
  addIdColumn: <T extends string>(table: CreateTableBuilder<T, never>) =>
    table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement()),

  // The table is its primary key, so a run of blocks is read as one range.
  keyOrdered: 'without rowid',
};
