import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import type { Schema } from '../db/schema.js';

/** A user's second factor as it stands (never rendered whole: the secret is answered once, by the enrolment). */
export interface TwoFactorState {
  secret: string;
  created_at: Date;
  confirmed_at: Date | null;
  last_step: number | null;
  recovery_codes_left: number;
}

/** What an enrolment came to: made (a pending one replaced), refused while one is confirmed, or no such user. */
export type EnrolOutcome = 'enrolled' | 'enabled' | 'not_found';

/** users.totp_enabled follows the confirmed row, and the change to `users` tells every process (migration 033). */
const markUser = (trx: Kysely<Schema>, userId: number, enabled: boolean, now: Date) =>
  trx.updateTable('users').set({ totp_enabled: enabled ? 1 : 0, updated_at: now.toISOString() }).where('id', '=', userId).execute();

/** The SQL of `user_two_factor` and `user_recovery_codes` (migration 033). */
export function twoFactorRepository(database: Database) {
  const { db } = database;
  return {
    async find(userId: number): Promise<TwoFactorState | undefined> {
      const row = await db.selectFrom('user_two_factor').select(['secret', 'created_at', 'confirmed_at', 'last_step']).where('user_id', '=', userId).executeTakeFirst();
      if (!row) return undefined;
      const left = await db.selectFrom('user_recovery_codes').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirstOrThrow();
      return {
        secret: row.secret,
        created_at: new Date(row.created_at),
        confirmed_at: row.confirmed_at === null ? null : new Date(row.confirmed_at),
        last_step: row.last_step === null ? null : Number(row.last_step),
        recovery_codes_left: Number(left.n),
      };
    },

    /** A new pending secret and recovery codes (their hashes) for the user, in place of a pending one; never over a confirmed one. */
    enrol(userId: number, secret: string, codeHashes: readonly string[], now: Date): Promise<EnrolOutcome> {
      return db.transaction().execute(async (trx) => {
        // The write first, so SQLite holds the write lock while it reads.
        const replaced = await trx.updateTable('user_two_factor').set({ secret, created_at: now.toISOString(), last_step: null })
          .where('user_id', '=', userId).where('confirmed_at', 'is', null).executeTakeFirst();
        if (Number(replaced.numUpdatedRows) === 0) {
          const existing = await trx.selectFrom('user_two_factor').select('user_id').where('user_id', '=', userId).executeTakeFirst();
          if (existing) return 'enabled';
          const user = await trx.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
          if (!user) return 'not_found';
          await trx.insertInto('user_two_factor').values({ user_id: userId, secret, created_at: now.toISOString(), confirmed_at: null, last_step: null }).execute();
        }
        await trx.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
        await trx.insertInto('user_recovery_codes').values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null }))).execute();
        return 'enrolled';
      });
    },

    /**
     * Records `step` as the user's last accepted one unless a step as late was accepted already:
     * false then (a replay, in this process or another).
     */
    async acceptStep(userId: number, step: number): Promise<boolean> {
      const result = await db.updateTable('user_two_factor').set({ last_step: step })
        .where('user_id', '=', userId).where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)])).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Marks a recovery code used: false when the user has no unused code of that hash. */
    async useRecoveryCode(userId: number, codeHash: string, now: Date): Promise<boolean> {
      const result = await db.updateTable('user_recovery_codes').set({ used_at: now.toISOString() })
        .where('user_id', '=', userId).where('code_hash', '=', codeHash).where('used_at', 'is', null).executeTakeFirst();
      return Number(result.numUpdatedRows) >= 1;
    },

    /** The pending second factor confirmed (with `step` accepted): false when there was none pending. */
    confirm(userId: number, step: number, now: Date): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const result = await trx.updateTable('user_two_factor').set({ confirmed_at: now.toISOString(), last_step: step })
          .where('user_id', '=', userId).where('confirmed_at', 'is', null).executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await markUser(trx, userId, true, now);
        return true;
      });
    },

    /** Removes the user's second factor, pending or confirmed, and its recovery codes: false when it had none. */
    remove(userId: number, now: Date): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('user_two_factor').where('user_id', '=', userId).executeTakeFirst();
        await trx.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
        if (Number(result.numDeletedRows) !== 1) return false;
        await markUser(trx, userId, false, now);
        return true;
      });
    },
  };
}

export type TwoFactorRepository = ReturnType<typeof twoFactorRepository>;
