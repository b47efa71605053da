import { type CreateTableBuilder, type Kysely, PostgresAdapter, sql } from 'kysely';

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
 * SQLite says `UNIQUE constraint failed: users.login`; PostgreSQL, code 23505 with the detail
 * `Key (login)=(bob) already exists.`
 */
export function uniqueViolationColumn(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (code === 'SQLITE_CONSTRAINT_UNIQUE') {
    return /UNIQUE constraint failed: \w+\.(\w+)/.exec(error.message)?.[1];
  }
  if (code === '23505') {
    return /^Key \((\w+)\)/.exec(String((error as { detail?: unknown }).detail))?.[1];
  }
  return undefined;
}

/**
 * The schema the migration bookkeeping tables live in. PostgreSQL: the connection's current schema,
 * named explicitly because kysely would otherwise take such tables in any schema as its own.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema: this reads no table
export async function migrationSchema(dialect: DialectName, db: Kysely<any>): Promise<string | undefined> {
  if (dialect === 'sqlite') return undefined;
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema: this reads no table
export function dialectOf(db: Kysely<any>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** An arbitrary, fixed advisory-lock key for changes that could leave no active administrator. */
const ADMINISTRATORS_LOCK = 7_302_114;

/**
 * Inside a transaction: waits until no other transaction is changing administrators. PostgreSQL
 * checks the "another active administrator" guard against a snapshot per statement, so two
 * administrators suspending each other at once could both succeed without it; SQLite runs one
 * writer at a time already.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema: this reads no table
export async function serializeAdministratorChanges(trx: Kysely<any>): Promise<void> {
  if (dialectOf(trx) === 'postgres') await sql`select pg_advisory_xact_lock(${ADMINISTRATORS_LOCK})`.execute(trx);
}
