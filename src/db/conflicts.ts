/**
 * PostgreSQL's SQLSTATEs for a transaction it rolled back so that another could go on: a deadlock
 * (40P01) or a serialization failure (40001). Nothing of such a transaction was kept, so running it
 * again is safe, and is what PostgreSQL's manual asks of the client.
 */
const CONFLICTS = new Set(['40P01', '40001']);

/** How many times a transaction runs before its conflict is answered as an error. */
export const CONFLICT_ATTEMPTS = 3;

/**
 * Runs `transaction` (a whole transaction, begun and ended inside) again when PostgreSQL rolled it back
 * for a conflict with another, up to CONFLICT_ATTEMPTS times in all (docs/architecture.md#error-counts).
 * `transaction` must set up afresh whatever it fills in besides the database. SQLite never raises these.
 */
export async function retryingConflicts<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      if (attempt >= CONFLICT_ATTEMPTS || !CONFLICTS.has((error as { code?: unknown }).code as string)) throw error;
    }
  }
}
