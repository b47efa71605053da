import { createRequire } from 'node:module';
import type pg from 'pg';

/**
 * The `pg` driver, loaded when a PostgreSQL database is first opened, so that a process on SQLite
 * never loads it (start-up time: docs/operations.md#start-up).
 */
export const loadPg = (): typeof pg => createRequire(import.meta.url)('pg') as typeof pg;
