import type SQLite from 'better-sqlite3';
import type { TextFunctions } from './text.js';

/** SQLite's lower() folds ASCII letters only: cmi adds this function to each connection instead. */
const UNICODE_LOWER = 'unicode_lower';

export const sqliteText: TextFunctions = { lowerFunction: UNICODE_LOWER };

/** Adds `unicode_lower` to `sqlite` (connection/sqlite.ts, on opening): JavaScript's toLowerCase, every letter folded. */
export function addUnicodeLower(sqlite: SQLite.Database): void {
  sqlite.function(UNICODE_LOWER, { deterministic: true }, (text: unknown) => (typeof text === 'string' ? text.toLowerCase() : text));
}
