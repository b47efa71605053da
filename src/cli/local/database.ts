import { loadConfig } from '../../config.js';
import { complain } from '../common/output.js';
import { type Database, DatabaseMissing, isMigrated, migrateToLatest, openDatabase } from '../../db/database.js';
import { displayDatabaseUrl } from '../../db/database-url.js';
import { UsageError } from '../common/usage-error.js';
import { cliEnv } from '../common/io.js';

/** A local command finds no cmi database where DATABASE_URL points (docs/operations.md#the-cmi-command): a usage mistake. */
const noDatabase = (where: string) =>
  new UsageError(`no cmi database at ${where}: point DATABASE_URL at yours (a sqlite: path is read from the working directory), or create this one with cmi migrate (or cmi serve)`);

/**
 * Runs `run` on the configured database, brought up to date first, and closes it. It never creates one: a
 * SQLite file that is not there, or a database cmi never migrated (an empty PostgreSQL schema), is
 * refused with its absolute path (`cmi migrate` and `cmi serve` create them).
 */
export async function withDatabase<T>(run: (database: Database) => Promise<T>): Promise<T> {
  let database: Database;
  try {
    database = openDatabase(loadConfig(cliEnv()), { mustExist: true });
  } catch (error) {
    if (error instanceof DatabaseMissing) throw noDatabase(error.where);
    throw error;
  }
  try {
    if (!(await isMigrated(database))) throw noDatabase(displayDatabaseUrl(database.dialect.target));
    await migrateToLatest(database, { onWait: complain });
    return await run(database);
  } finally {
    await database.close();
  }
}

/** All of standard input (the current run's: common/io.ts). */
export { readStdin } from '../common/io.js';

/** --page and --per-page of a local list. */
export function pages(options: { page: string; perPage: string }): { page: number; perPage: number } {
  const page = Number(options.page);
  const perPage = Number(options.perPage);
  if (!Number.isInteger(page) || page < 1 || !Number.isInteger(perPage) || perPage < 1) throw new UsageError('--page and --per-page must be positive integers');
  return { page, perPage };
}
