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

/** Query parameters that carry a password (libpq's, which pg reads from the URL too). */
const PASSWORD_PARAMETER = /([?&](?:ssl)?password=)[^&#]*/gi;

/** The URL fit to print or log: a password in it is masked (its own, or a `password` parameter), even in a URL that does not parse. */
export function displayDatabaseUrl(url: string): string {
  const inQuery = new RegExp(PASSWORD_PARAMETER.source, 'i').test(url);
  if (!url.includes('@') && !inQuery) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(PASSWORD_PARAMETER, '$1***');
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@').replace(PASSWORD_PARAMETER, '$1***');
  }
}
