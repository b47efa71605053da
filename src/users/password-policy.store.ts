import type { Database } from '../db/database.js';
import { settingsRepository } from '../db/settings.store.js';

/** The `settings` key the policy is stored under, as JSON (migration 034). */
const POLICY_KEY = 'password_policy';

/**
 * The password policy's rows (docs/security.md#password-policy): the policy as one `settings` row
 * every process reads, and each user's earlier password hashes in `password_history`.
 */
export function passwordPolicyRepository(database: Database) {
  const { db } = database;
  const settings = settingsRepository(database);
  return {
    /** The stored policy's JSON text, or undefined when none was ever stored. */
    readPolicy: (): Promise<string | undefined> => settings.get(POLICY_KEY),

    writePolicy: (text: string): Promise<void> => settings.put(POLICY_KEY, text),

    /** The user's earlier password hashes, the latest first, at most `limit`. */
    async earlierHashes(userId: number, limit: number): Promise<string[]> {
      if (limit <= 0) return [];
      const rows = await db.selectFrom('password_history').select('password_hash').where('user_id', '=', userId).orderBy('id', 'desc').limit(limit).execute();
      return rows.map((row) => row.password_hash);
    },

    /** Keeps `replacedHash` as the user's latest earlier password, then only the latest `keep` of them (0: none). */
    async keepEarlier(userId: number, replacedHash: string | undefined, keep: number, at: Date): Promise<void> {
      if (replacedHash !== undefined && keep > 0) {
        await db.insertInto('password_history').values({ user_id: userId, password_hash: replacedHash, created_at: at.toISOString() }).execute();
      }
      const kept = keep <= 0 ? [] : await db.selectFrom('password_history').select('id').where('user_id', '=', userId).orderBy('id', 'desc').limit(keep).execute();
      let remove = db.deleteFrom('password_history').where('user_id', '=', userId);
      if (kept.length > 0) remove = remove.where('id', 'not in', kept.map((row) => row.id));
      await remove.execute();
    },
  };
}

export type PasswordPolicyRepository = ReturnType<typeof passwordPolicyRepository>;
