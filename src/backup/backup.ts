import { once } from 'node:events';
import { createWriteStream, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { createGzip } from 'node:zlib';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.js';
import { BACKED_UP_TABLES } from './backup-tables.js';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, BackupLines, type Cell, readBackup } from './backup-file.js';

// Any table, by name: a backup reads every table whatever its row type.
type AnyDb = Kysely<Record<string, Record<string, unknown>>>;

/** Rows read at a time, in key order. */
const PAGE_ROWS = 1000;

export interface BackupSummary {
  file: string;
  bytes: number;
  schema_version: string;
  cmi_version: string;
  database: string;
  rows: Record<string, number>;
}

/**
 * The migrations the database has, in order (none when cmi never migrated it). It looks for the table
 * rather than trying it: on PostgreSQL a failed statement would end the transaction it runs in.
 */
export async function appliedMigrations(database: Database, db: Kysely<unknown>): Promise<string[]> {
  if (!(await tableNames(database, db)).includes('kysely_migration')) return [];
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  return rows.map((row) => row.name);
}

/**
 * Writes a consistent backup of `database` to `file` while others keep writing to it
 * (docs/operations.md#backup-and-restore): every table is read in one read-only transaction, which sees
 * the database as it was when the transaction began (a snapshot on both SQLite in WAL mode and PostgreSQL
 * at repeatable read). The file is written beside `file`, read back and checked, and only then takes its
 * name, so a backup that failed never leaves a file that looks whole. `within`: read through that
 * connection instead, inside the transaction it is in (a restore's copy of what it replaces).
 * A file that cannot be created throws its errno error (ENOENT, EISDIR, EACCES...) before anything is read.
 */
export async function takeBackup(database: Database, file: string, cmiVersion: string, within?: Kysely<unknown>): Promise<BackupSummary> {
  const partial = `${file}.partial-${process.pid}`;
  // Opened here, not by the stream: a folder that is not there is an error thrown now, not an 'error' event later.
  const fd = openSync(partial, 'w', 0o600);
  const gzip = createGzip();
  const out = createWriteStream(partial, { fd });
  const finished = once(out, 'close');
  gzip.pipe(out);
  const lines = new BackupLines(async (text) => {
    if (!gzip.write(text)) await once(gzip, 'drain');
  });
  let header;
  try {
    const read = async (trx: Kysely<unknown>) => {
      const migrations = await appliedMigrations(database, trx);
      if (migrations.length === 0) throw new Error('the database has no cmi tables: there is nothing to back up');
      const present = new Set(await tableNames(database, trx));
      const tables = BACKED_UP_TABLES.filter(({ table }) => present.has(table));
      const header = {
        format: BACKUP_FORMAT, format_version: BACKUP_FORMAT_VERSION, cmi_version: cmiVersion, migrations,
        database: database.dialect.name, taken_at: new Date().toISOString(), tables: tables.map(({ table }) => table),
      } as const;
      await lines.header({ ...header, tables: [...header.tables] });
      for (const { table, key } of tables) {
        const columns = await database.dialect.catalog.columnNames(trx, table);
        await lines.table(table, columns, pagesOf(trx as AnyDb, table, key, columns));
      }
      return header;
    };
    header = within ? await read(within) : await database.dialect.catalog.snapshot(database.db as unknown as Kysely<unknown>, read);
    await lines.end();
    gzip.end();
    await finished;
    await readBackup(partial);
    renameSync(partial, file);
  } catch (error) {
    gzip.destroy();
    out.destroy();
    rmSync(partial, { force: true });
    throw error;
  }
  return {
    file, bytes: statSync(file).size, schema_version: header.migrations.at(-1) as string, cmi_version: cmiVersion,
    database: header.database, rows: lines.rows,
  };
}

/** The tables of the database cmi uses (its current schema, on PostgreSQL). */
export function tableNames(database: Database, db: Kysely<unknown> = database.db as unknown as Kysely<unknown>): Promise<string[]> {
  return database.dialect.catalog.tableNames(db);
}

/** The rows of `table` in key order, a page at a time, each as its values in `columns`' order. */
async function* pagesOf(db: AnyDb, table: string, key: readonly string[], columns: string[]): AsyncGenerator<Cell[][]> {
  let after: unknown[] | undefined;
  for (;;) {
    let query = db.selectFrom(table).select(columns).limit(PAGE_ROWS);
    for (const column of key) query = query.orderBy(sql.ref(column));
    if (after) query = query.where(sql<boolean>`(${sql.join(key.map((column) => sql.ref(column)))}) > (${sql.join(after)})`);
    const rows = await query.execute();
    if (rows.length === 0) return;
    yield rows.map((row) => columns.map((column) => cell(row[column], table, column)));
    if (rows.length < PAGE_ROWS) return;
    const lastRow = rows[rows.length - 1] as Record<string, unknown>;
    after = key.map((column) => lastRow[column]);
  }
}

/** A value as the backup keeps it: text, a number (PostgreSQL's 64-bit integers come as text and stay so) or null. */
function cell(value: unknown, table: string, column: string): Cell {
  if (value === null || typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'bigint') return value.toString();
  throw new Error(`${table}.${column} holds a value a backup cannot keep (${typeof value})`);
}
