import type { Kysely } from 'kysely';
import { type Database, migrateTo, migrateToLatest } from '../db/database.js';
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

/**
 * Restores the backup in `file` into `database` (docs/operations.md#backup-and-restore). The file is
 * read through and checked first: a truncated or damaged one, or one of a newer cmi, is refused before
 * anything changes. The database must hold no users and no errors, unless `force`, which first writes a
 * backup of it to `replacedBackupFile`. Its cmi tables are then dropped, the migrations the backup had are
 * applied, every row is loaded in one transaction, and the migrations since are applied to them.
 */
export async function restoreBackup(database: Database, file: string, options: { force: boolean; replacedBackupFile: string; cmiVersion: string }): Promise<RestoreSummary> {
  const { header } = await readBackup(file);
  const known = Object.keys(allMigrations(database.dialect));
  const schemaVersion = header.migrations.at(-1) ?? '';
  if (header.migrations.some((name, i) => known[i] !== name)) {
    throw new BadBackup(`it is of a newer cmi (its schema is ${schemaVersion}; this cmi's is ${known.at(-1) ?? ''}): restore it with that cmi or a later one`);
  }
  const db = database.db as unknown as Kysely<unknown>;
  const applied = await appliedMigrations(db);
  if (applied.some((name) => !known.includes(name))) {
    throw new BadBackup('the database is of a newer cmi than this one: restore with that cmi');
  }
  let replaced: BackupSummary | undefined;
  if (applied.length > 0) {
    const held = await heldData(db as AnyDb);
    if (held !== undefined) {
      if (!options.force) throw new BadBackup(`the database holds ${held}: restore only into an empty database, or with --force, which takes a backup of it first`);
      replaced = await takeBackup(database, options.replacedBackupFile, options.cmiVersion);
    }
    await dropCmiTables(database, db);
  }
  await migrateTo(database, schemaVersion);
  const rows = await load(database, file, header);
  const migrated = await migrateToLatest(database);
  return { file, schema_version: schemaVersion, migrated, rows, ...(replaced ? { replaced_backup: replaced } : {}) };
}

/** What the database holds that a restore would replace, in words; undefined when it holds no user and no error. */
async function heldData(db: AnyDb): Promise<string | undefined> {
  const count = async (table: string) => Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const [users, errors] = [await count('users'), await count('infrastructure_errors')];
  if (users === 0 && errors === 0) return undefined;
  return `${users} ${users === 1 ? 'user' : 'users'} and ${errors} ${errors === 1 ? 'error' : 'errors'}`;
}

/** Drops every table of cmi's (their triggers go with them); tables it does not know are left. */
async function dropCmiTables(database: Database, db: Kysely<unknown>): Promise<void> {
  const ours = new Set([...BACKED_UP_TABLES.map(({ table }) => table), ...DERIVED_TABLES]);
  const present = (await tableNames(database, db)).filter((table) => ours.has(table) && table !== 'sqlite_sequence');
  await database.dialect.catalog.dropTables(db, present);
}

/**
 * Loads the backup's rows in one transaction: first the rows the migrations put in (the permission
 * catalogue, the system roles) are removed, children first, then each table's rows are inserted,
 * parents first. Triggers fill the derived tables as the rows arrive; new ids then continue after the
 * largest restored.
 */
async function load(database: Database, file: string, header: BackupHeader): Promise<Record<string, number>> {
  const rows: Record<string, number> = {};
  const db = database.db as unknown as AnyDb;
  await db.transaction().execute(async (trx) => {
    for (const table of [...header.tables].reverse()) await trx.deleteFrom(table).execute();
    await readBackup(file, async ({ table, columns, batches }) => {
      rows[table] = 0;
      const perInsert = Math.max(1, Math.floor(MAX_VALUES_PER_INSERT / Math.max(1, columns.length)));
      for await (const batch of batches) {
        for (let at = 0; at < batch.length; at += perInsert) {
          const values = batch.slice(at, at + perInsert).map((row) => Object.fromEntries(columns.map((column, i) => [column, row[i]])));
          await trx.insertInto(table).values(values).execute();
        }
        rows[table] += batch.length;
      }
      await database.dialect.catalog.continueIds(trx as unknown as Kysely<unknown>, table);
    });
  });
  return rows;
}
