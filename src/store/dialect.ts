import type { CreateTableBuilder } from 'kysely';

/** The databases cmi runs on. Every difference between them lives in this file. */
export type DialectName = 'sqlite' | 'postgres';

/** Adds an auto-generated integer primary key named `id`. */
export function withIdColumn<T extends string>(
  dialect: DialectName,
  table: CreateTableBuilder<T, never>,
): CreateTableBuilder<T, 'id'> {
  return dialect === 'sqlite'
    ? table.addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
    : table.addColumn('id', 'integer', (column) => column.primaryKey().generatedByDefaultAsIdentity());
}

/**
 * The column a unique-constraint violation names, or undefined when `error` is something else.
 * SQLite says `UNIQUE constraint failed: users.login`.
 */
export function uniqueViolationColumn(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (code === 'SQLITE_CONSTRAINT_UNIQUE') {
    return /UNIQUE constraint failed: \w+\.(\w+)/.exec(error.message)?.[1];
  }
  return undefined;
}
