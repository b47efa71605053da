import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { PerDatabase } from '../db/dialects/dialect.js';
import type { Schema, UserApiKeysTable } from '../db/schema.js';

/** One of a user's API keys as it is shown (docs/api.md#api-keys): never the key, never its hash. */
export interface UserApiKey {
  id: number;
  user_id: number;
  description: string;
  default: boolean;
  created_at: Date;
  last_used_at: Date | null;
}

const shownColumns = ['id', 'user_id', 'description', 'is_default', 'created_at', 'last_used_at'] as const;
type ShownRow = Pick<Selectable<UserApiKeysTable>, (typeof shownColumns)[number]>;

const toKey = (row: ShownRow): UserApiKey => ({
  id: Number(row.id),
  user_id: Number(row.user_id),
  description: row.description,
  default: Number(row.is_default) === 1,
  created_at: new Date(row.created_at),
  last_used_at: row.last_used_at === null ? null : new Date(row.last_used_at),
});

/** An arbitrary, fixed advisory-lock key (with the user's id) for adding a key under the per-user limit. */
const KEYS_LOCK = 7_302_115;

/** Inside a transaction: waits until no other transaction is adding a key for `userId`. */
const serializeKeyCreation: PerDatabase<(trx: Kysely<Schema>, userId: number) => Promise<void>> = {
  // One writer at a time already (the transaction writes first, see create).
  sqlite: async () => {},
  // Two transactions counting the user's keys at once would both see room for one more.
  postgres: async (trx, userId) => {
    await sql`select pg_advisory_xact_lock(${KEYS_LOCK}, ${userId})`.execute(trx);
  },
};

/** Thrown inside a transaction to undo it: the user already had as many keys as it may. */
class LimitReached extends Error {}

/** What revoking a key came to. */
export type RevokeOutcome = 'revoked' | 'not_found';

/** The SQL of `user_api_keys` (migration 021) besides authentication's lookup (users.store.ts findCredentials). */
export function userApiKeysRepository(database: Database) {
  const { db, dialect } = database;
  return {
    /** The user's keys at positions `offset` .. `offset + limit - 1`, in id order. */
    async page(userId: number, limit: number, offset: number): Promise<UserApiKey[]> {
      const rows = await db.selectFrom('user_api_keys').select(shownColumns).where('user_id', '=', userId).orderBy('id').limit(limit).offset(offset).execute();
      return rows.map(toKey);
    },

    async count(userId: number): Promise<number> {
      const row = await db.selectFrom('user_api_keys').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async find(userId: number, id: number): Promise<UserApiKey | undefined> {
      const row = await db.selectFrom('user_api_keys').select(shownColumns).where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
      return row && toKey(row);
    },

    /**
     * Adds a key (its hash) to the user, unless the user already has `max` keys: 'limit'. Undefined when
     * there is no such user.
     */
    async create(userId: number, description: string, keyHash: string, max: number, now: Date): Promise<UserApiKey | 'limit' | undefined> {
      try {
        return await db.transaction().execute(async (trx) => {
          await dialect.choose(serializeKeyCreation)(trx, userId);
          // The insert first, so SQLite holds the write lock while it counts; none when there is no such user.
          const row = await trx.insertInto('user_api_keys')
            .columns(['user_id', 'description', 'key_hash', 'is_default', 'created_at'])
            .expression((eb) => eb.selectFrom('users')
              .select((users) => [users.ref('id').as('user_id'), users.val(description).as('description'), users.val(keyHash).as('key_hash'), users.lit(0).as('is_default'), users.val(now.toISOString()).as('created_at')])
              .where('id', '=', userId))
            .returning(shownColumns)
            .executeTakeFirst();
          if (!row) return undefined;
          const { n } = await trx.selectFrom('user_api_keys').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
          if (Number(n) > max) throw new LimitReached();
          return toKey(row);
        });
      } catch (error) {
        if (error instanceof LimitReached) return 'limit';
        throw error;
      }
    },

    /**
     * Revokes key `id` of the user and ends the user's sessions (a session may have been opened with
     * it). Revoking the default key also clears `users.api_key_hash` (migration 021).
     */
    async revoke(userId: number, id: number): Promise<RevokeOutcome> {
      return db.transaction().execute(async (trx): Promise<RevokeOutcome> => {
        const removed = await trx.deleteFrom('user_api_keys').where('user_id', '=', userId).where('id', '=', id).returning('is_default').executeTakeFirst();
        if (!removed) return 'not_found';
        await trx.updateTable('users')
          .set(Number(removed.is_default) === 1 ? { api_key_hash: null, session_epoch: sql<number>`session_epoch + 1` } : { session_epoch: sql<number>`session_epoch + 1` })
          .where('id', '=', userId)
          .execute();
        return 'revoked';
      }).finally(() => database.transactionEnded('users'));
    },

    /**
     * Writes when keys were last used (`uses`: key id to datetime), never moving one back, in one
     * transaction. Changes no credential: migration 021's triggers ignore `last_used_at`.
     */
    async recordUse(uses: ReadonlyMap<number, string>): Promise<void> {
      if (uses.size === 0) return;
      const byTime = new Map<string, number[]>();
      for (const [id, at] of uses) byTime.set(at, [...(byTime.get(at) ?? []), id]);
      await db.transaction().execute(async (trx) => {
        for (const [at, ids] of [...byTime].sort(([a], [b]) => (a < b ? -1 : 1))) {
          await trx.updateTable('user_api_keys').set({ last_used_at: at })
            .where('id', 'in', ids.sort((a, b) => a - b))
            .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
            .execute();
        }
      });
    },
  };
}

export type UserApiKeysRepository = ReturnType<typeof userApiKeysRepository>;
