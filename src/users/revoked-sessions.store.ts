import type { Database } from '../db/database.js';

/** Sessions ended one at a time (logout). Rows live only until the session would have expired anyway. */
export function revokedSessionsRepository(database: Database) {
  const { db } = database;
  return {
    async revoke(sessionId: string, expiresAt: Date, now: Date): Promise<void> {
      await db
        .insertInto('revoked_sessions')
        .values({ session_id: sessionId, expires_at: expiresAt.toISOString() })
        .onConflict((oc) => oc.column('session_id').doNothing())
        .execute();
      await db.deleteFrom('revoked_sessions').where('expires_at', '<', now.toISOString()).execute();
    },

    /** Revokes `sessionId` if nothing had: true for the one caller whose insert took it (a code used once: users/sign-in-handoff.ts). */
    async claim(sessionId: string, expiresAt: Date): Promise<boolean> {
      const row = await db.insertInto('revoked_sessions').values({ session_id: sessionId, expires_at: expiresAt.toISOString() })
        .onConflict((oc) => oc.column('session_id').doNothing()).returning('session_id').executeTakeFirst();
      return row !== undefined;
    },

    async isRevoked(sessionId: string): Promise<boolean> {
      const row = await db.selectFrom('revoked_sessions').select('session_id').where('session_id', '=', sessionId).executeTakeFirst();
      return row !== undefined;
    },
  };
}

export type RevokedSessionsRepository = ReturnType<typeof revokedSessionsRepository>;
