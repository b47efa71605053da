import type { ConnectionFailure } from './connection-failure.js';

/**
 * The database cannot serve now (unreachable, hung, locked by another process, full). The dialects
 * throw it; the HTTP layer answers it as a 503 problem with Retry-After, never a 500, and it is not
 * recorded as a fault (recording needs the database too): shared/problems.ts `problemOf`.
 */
export type DatabaseUnavailableReason =
  | 'the database cannot be reached'
  | 'the database did not answer in time'
  | 'the database is locked by another process'
  | 'the database is full'
  | 'the database is out of resources'
  | 'the database refuses writes'
  | 'the database cannot be read or written';

export class DatabaseUnavailable extends Error {
  constructor(
    readonly reason: DatabaseUnavailableReason,
    readonly retryAfterSeconds: number,
    /** Where the database is and why it cannot be reached, when it cannot (connection-failure.ts). */
    readonly connectionFailure?: ConnectionFailure,
    options?: ErrorOptions,
  ) {
    super(`Service unavailable: ${reason}; try again later`, options);
  }
}
