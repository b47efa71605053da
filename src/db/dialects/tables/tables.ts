import type { CreateTableBuilder } from 'kysely';

/** Parts of a table's definition that each database spells its own way. */
export interface Tables {
  /** Adds an auto-generated integer primary key named `id`. */
  addIdColumn<T extends string>(table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'>;
  /** What follows `create table (...)` for a table stored in primary-key order (SQLite: without rowid; PostgreSQL has none). */
  readonly keyOrdered: string;
}
