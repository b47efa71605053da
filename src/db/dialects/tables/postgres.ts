import type { CreateTableBuilder } from 'kysely';
import type { Tables } from './tables.js';

export const postgresTables: Tables = {
  addIdColumn: <T extends string>(table: CreateTableBuilder<T, never>) =>
    table.addColumn('id', 'integer', (column) => column.primaryKey().generatedByDefaultAsIdentity()),

  keyOrdered: '',
};
