import type { Kysely } from 'kysely';
import { type Database, migrateWithin } from '../db/database.js';
import { allMigrations } from '../db/migrations/index.js';
import { BACKED_UP_TABLES, DERIVED_TABLES } from './backup-tables.js';
import { type BackupSummary, appliedMigrations, tableNames, takeBackup } from './backup.js';
import { BadBackup, type BackupHeader, readBackup } from './backup-file.js';

type AnyDb = Kysely<Record<string, Record<string, unknown>>>;

/** Bound values one insert statement may carry (SQLite allows 32766, PostgreSQL 65535). */
const MAX_VALUES_PER_INSERT = 30_000;

export interface RestoreSummary {
  file: string;
  schema_version: string;
  /** Migrations applied after the rows were loaded: the backup was of an older cmi. */
  migrated: string[];
  rows: Record<string, number>;
  /** With --force on a database that held data: the backup taken of it first. */
  replaced_backup?: BackupSummary;
}

/** A backup file read through and found whole (checkBackup): what restoreBackup loads. */
export interface CheckedBackup {
  file: string;
  header: BackupHeader;
  /** Each table's columns, as the file names them. */
  columns: Record<string, string[]>;
}

/**
 * The restore failed once it had begun, and was rolled back: the database is as it was. With
 * --force the backup taken of it first is `replacedBackup`, kept (the message names it).
 */
export class RestoreFailed extends BadBackup {
  constructor(message: string, readonly replacedBackup: BackupSummary | undefined, options?: ErrorOptions) {
    super(message, options);
  }
}

const BACKED_UP = new Set(BACKED_UP_TABLES.map(({ table }) => table));

/**
 * Reads the backup in `file` through and checks it, touching no database (docs/operations.md#backup-and-restore):
 * a truncated or damaged file, one of a newer cmi, or one that names a table a backup does not hold
 * (another application's, the migrations' record) or a column twice throws BadBackup.
 */
export async function checkBackup(file: string, dialect: Database['dialect']): Promise<CheckedBackup> {
  const { header, columns } = await readBackup(file);
  if (header.migrations.length === 0) throw new BadBackup('it records no migration: it was not written by cmi backup');
  const known = Object.keys(allMigrations(dialect));
  const schemaVersion = header.migrations.at(-1) as string;
  if (header.migrations.some((name, i) => known[i] !== name)) {
    throw new BadBackup(`it is of a newer cmi (its schema is ${schemaVersion}; this cmi's is ${known.at(-1) ?? ''}): restore it with that cmi or a later one`);
  }
  const seen = new Set<string>();
  for (const table of header.tables) {
    // Only cmi's own data tables: never another table of the database, nor kysely_migration (docs/security.md#backups).
    if (!BACKED_UP.has(table)) throw new BadBackup(`it names the table ${JSON.stringify(table)}, which a cmi backup never holds: it was not written by cmi backup`);
    if (seen.has(table)) throw new BadBackup(`it holds the table ${table} twice: the file is damaged`);
    seen.add(table);
    const names = columns[table] ?? [];
    if (new Set(names).size !== names.length) throw new BadBackup(`it names a column of ${table} twice: the file is damaged`);
  }
  return { file, header, columns };
}

/**
 * Restores the checked backup into `database` (docs/operations.md#backup-and-restore). All of it is
 * one transaction (Catalog.inOneTransaction): the check that the database holds no users and no
 * errors (unless `force`, which first writes a backup of it to `replacedBackupFile`), dropping cmi's
 * tables, applying the migrations the backup had, checking its columns against them, loading every
 * row and applying the migrations since. Any failure, or the process dying, before its commit leaves
 * the database as it was. `onReplacedBackup` hears of the copy as soon as it is written.
 */
export async function restoreBackup(
  database: Database,
  checked: CheckedBackup,
  options: { force: boolean; replacedBackupFile: string; cmiVersion: string; onReplacedBackup?: (summary: BackupSummary) => void },
): Promise<RestoreSummary> {
  const { header } = checked;
  const schemaVersion = header.migrations.at(-1) as string;
  const known = Object.keys(allMigrations(database.dialect));
  let replaced: BackupSummary | undefined;
  try {
    return await database.dialect.catalog.inOneTransaction(database.db as unknown as Kysely<unknown>, async (conn) => {
      const applied = await appliedMigrations(database, conn);
      if (applied.some((name) => !known.includes(name))) {
        throw new BadBackup('the database is of a newer cmi than this one: restore with that cmi');
      }
      if (applied.length > 0) {
        const held = await heldData(database, conn as AnyDb);
        if (held !== undefined) {
          if (!options.force) throw new BadBackup(`the database holds ${held}: restore only into an empty database, or with --force, which takes a backup of it first`);
          replaced = await takeBackup(database, options.replacedBackupFile, options.cmiVersion, conn);
          options.onReplacedBackup?.(replaced);
        }
        await dropCmiTables(database, conn);
      }
      await migrateWithin(database, conn, schemaVersion);
      await checkColumns(database, conn, checked, schemaVersion);
      const rows = await load(database, conn as AnyDb, checked);
      const migrated = await migrateWithin(database, conn);
      return { file: checked.file, schema_version: schemaVersion, migrated, rows, ...(replaced ? { replaced_backup: replaced } : {}) };
    });
  } catch (error) {
    // Before the copy, an error is told as it is; after it, the message names the copy too.
    if (replaced === undefined) throw error;
    const message = error instanceof BadBackup ? error.message : `the database refused it (${error instanceof Error ? error.message : String(error)})`;
    throw new RestoreFailed(message, replaced, { cause: error });
  }
}

/** What the database holds that a restore would replace, in words; undefined when it holds no user and no error. */
async function heldData(database: Database, db: AnyDb): Promise<string | undefined> {
  const present = new Set(await tableNames(database, db as unknown as Kysely<unknown>));
  const count = async (table: string) => present.has(table) ? Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n) : 0;
  const [users, errors] = [await count('users'), await count('infrastructure_errors')];
  if (users === 0 && errors === 0) return undefined;
  return `${users} ${users === 1 ? 'user' : 'users'} and ${errors} ${errors === 1 ? 'error' : 'errors'}`;
}

/**
 * Drops every table of cmi's (their triggers go with them); tables it does not know are left. The
 * derived tables go first, then the backed-up ones children first (the reverse of BACKED_UP_TABLES),
 * so no drop deletes a row another table still refers to.
 */
async function dropCmiTables(database: Database, db: Kysely<unknown>): Promise<void> {
  const order = [...DERIVED_TABLES, ...BACKED_UP_TABLES.map(({ table }) => table).reverse()];
  const present = new Set(await tableNames(database, db));
  await database.dialect.catalog.dropTables(db, order.filter((table) => present.has(table) && table !== 'sqlite_sequence'));
}

/** Each table of the backup is one of the schema `schemaVersion`, with every column the file names (else BadBackup). */
async function checkColumns(database: Database, db: Kysely<unknown>, checked: CheckedBackup, schemaVersion: string): Promise<void> {
  for (const table of checked.header.tables) {
    const has = new Set(await database.dialect.catalog.columnNames(db, table));
    if (has.size === 0) throw new BadBackup(`it holds the table ${table}, which cmi's schema ${schemaVersion} does not have: it was not written by cmi backup`);
    const lacking = (checked.columns[table] ?? []).filter((column) => !has.has(column));
    if (lacking.length > 0) throw new BadBackup(`its table ${table} has ${lacking.length === 1 ? 'a column' : 'columns'} ${lacking.map((c) => JSON.stringify(c)).join(', ')} that cmi's schema ${schemaVersion} does not: it was not written by cmi backup`);
  }
}

/**
 * Loads the backup's rows: first the rows the migrations put in (the permission catalogue, the
 * system roles) are removed, children first, then each table's rows are inserted, parents first.
 * Triggers fill the derived tables as the rows arrive; new ids then continue after the largest
 * restored. A row the database refuses names its table.
 */
async function load(database: Database, db: AnyDb, checked: CheckedBackup): Promise<Record<string, number>> {
  const rows: Record<string, number> = {};
  for (const table of [...checked.header.tables].reverse()) await db.deleteFrom(table).execute();
  let next = 0;
  await readBackup(checked.file, async ({ table, columns, batches }) => {
    // Read again for the load: the tables and columns checked, or the file changed meanwhile.
    if (table !== checked.header.tables[next++] || JSON.stringify(columns) !== JSON.stringify(checked.columns[table])) {
      throw new BadBackup('the file changed while it was being restored');
    }
    rows[table] = 0;
    const perInsert = Math.max(1, Math.floor(MAX_VALUES_PER_INSERT / Math.max(1, columns.length)));
    for await (const batch of batches) {
      for (let at = 0; at < batch.length; at += perInsert) {
        const values = batch.slice(at, at + perInsert).map((row) => Object.fromEntries(columns.map((column, i) => [column, row[i]])));
        try {
          await db.insertInto(table).values(values).execute();
        } catch (error) {
          throw new BadBackup(`the database refused a row of ${table} (${error instanceof Error ? error.message : String(error)})`, { cause: error });
        }
      }
      rows[table] += batch.length;
    }
    await database.dialect.catalog.continueIds(db as unknown as Kysely<unknown>, table);
  });
  return rows;
}
