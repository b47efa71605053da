import type { Database } from '../db/database.js';

/** The SQL of `account_unlock_tokens` (migration 036): one token per user, its SHA-256 only. */
export function accountUnlockRepository(database: Database) {
  const { db } = database;
  return {
    /**
     * Stores `tokenHash` for the user unless a token of it is still current at `now` (one mail per
     * lock window): true when stored (the caller then mails the token), false when one was already.
     */
    async issue(userId: number, tokenHash: string, expiresAt: Date, now: Date): Promise<boolean> {
      const row = await db.insertInto('account_unlock_tokens')
        .values({ user_id: userId, token_hash: tokenHash, expires_at: expiresAt.toISOString(), created_at: now.toISOString() })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ token_hash: tokenHash, expires_at: expiresAt.toISOString(), created_at: now.toISOString() })
          .where('account_unlock_tokens.expires_at', '<=', now.toISOString()))
        .returning('user_id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** The user's token hash while it is current at `now`. */
    async current(userId: number, now: Date): Promise<string | undefined> {
      const row = await db.selectFrom('account_unlock_tokens').select('token_hash').where('user_id', '=', userId).where('expires_at', '>', now.toISOString()).executeTakeFirst();
      return row?.token_hash;
    },

    /** Uses the token up: true for the one caller whose delete took it (single use, even when two race). */
    async consume(userId: number, tokenHash: string): Promise<boolean> {
      const result = await db.deleteFrom('account_unlock_tokens').where('user_id', '=', userId).where('token_hash', '=', tokenHash).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

export type AccountUnlockRepository = ReturnType<typeof accountUnlockRepository>;
