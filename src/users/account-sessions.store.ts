import { sql } from 'kysely';
import type { Database } from '../db/database.js';

/**
 * Ending sessions by moving session epochs (users/sessions.ts SessionClaims.epoch): a token carries the
 * epoch it was issued under, so moving the user's epoch ends every token it holds, in every process
 * (the change to `users` moves the credentials' version: migration 015). Nothing else of the user
 * changes, not even `updated_at`.
 */
export function accountSessionsRepository(database: Database) {
  const { db } = database;
  return {
    /** Ends every session of user `id`; false when there is no such user. */
    async endSessionsOf(id: number): Promise<boolean> {
      const result = await db.updateTable('users').set({ session_epoch: sql<number>`session_epoch + 1` }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Ends every session of every user, in one statement; how many users there were. */
    async endAllSessions(): Promise<number> {
      const result = await db.updateTable('users').set({ session_epoch: sql<number>`session_epoch + 1` }).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type AccountSessionsRepository = ReturnType<typeof accountSessionsRepository>;
