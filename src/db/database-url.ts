import { resolve } from 'node:path';
import { type Dialect, postgresDialect, sqliteDialect } from './dialects/dialect.js';

const POSTGRES_URL = /^postgres(ql)?:\/\//;

/**
 * The dialect a DATABASE_URL names, the one place that tells the database type: `sqlite:<path>`
 * (relative to the working directory) or `postgres://user@host:port/db` (`postgresql://` too).
 * Opens nothing. Throws with a readable reason for anything else.
 */
export function dialectFor(url: string): Dialect {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new Error('a sqlite: URL needs a file path, e.g. sqlite:./data/cmi.sqlite3');
    return sqliteDialect(resolve(path));
  }
  if (POSTGRES_URL.test(url) && url.length > 'postgres://'.length) return postgresDialect(url);
  throw new Error('must start with sqlite: or postgres:// (e.g. sqlite:./data/cmi.sqlite3)');
}

/** The URL fit to print or log: a password in it is masked, even in a URL that does not parse. */
export function displayDatabaseUrl(url: string): string {
  if (!url.includes('@')) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}
