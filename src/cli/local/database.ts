import { loadConfig } from '../../config.js';
import { type Database, migrateToLatest, openDatabase } from '../../db/database.js';
import { UsageError } from '../common/usage-error.js';

/** Runs `run` on the configured database, brought up to date first, and closes it. */
export async function withDatabase<T>(run: (database: Database) => Promise<T>): Promise<T> {
  const database = openDatabase(loadConfig());
  try {
    await migrateToLatest(database, { onWait: (line) => console.error(line) });
    return await run(database);
  } finally {
    await database.close();
  }
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** --page and --per-page of a local list. */
export function pages(options: { page: string; perPage: string }): { page: number; perPage: number } {
  const page = Number(options.page);
  const perPage = Number(options.perPage);
  if (!Number.isInteger(page) || page < 1 || !Number.isInteger(perPage) || perPage < 1) throw new UsageError('--page and --per-page must be positive integers');
  return { page, perPage };
}
