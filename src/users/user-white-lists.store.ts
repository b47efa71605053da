import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { PerDatabase } from '../db/dialects/dialect.js';
import type { Schema, UserWhiteListsTable } from '../db/schema.js';

/** One of a user's allowed addresses (docs/security.md#allowed-addresses), OnApp's `user_white_list`. */
export interface UserWhiteList {
  id: number;
  user_id: number;
  /** An address or CIDR range in its normal form (shared/ip-ranges.ts). */
  ip: string;
  description: string;
  created_at: Date;
  updated_at: Date;
}

const columns = ['id', 'user_id', 'ip', 'description', 'created_at', 'updated_at'] as const;

const toEntry = (row: Selectable<UserWhiteListsTable>): UserWhiteList => ({
  id: Number(row.id),
  user_id: Number(row.user_id),
  ip: row.ip,
  description: row.description,
  created_at: new Date(row.created_at),
  updated_at: new Date(row.updated_at),
});

/** An arbitrary, fixed advisory-lock key (with the user's id) for changing a user's list under its limit and uniqueness. */
const LIST_LOCK = 7_302_135;

/** Inside a transaction: waits until no other transaction is changing `userId`'s list. */
const serializeListChanges: PerDatabase<(trx: Kysely<Schema>, userId: number) => Promise<void>> = {
  // One writer at a time already: the transaction's first statement takes the write lock (see add).
  sqlite: async () => {},
  postgres: async (trx, userId) => {
    await sql`select pg_advisory_xact_lock(${LIST_LOCK}, ${userId})`.execute(trx);
  },
};

/** What adding or changing an entry came to, besides the entry. */
export type ListRefusal = 'no_user' | 'not_found' | 'duplicate' | 'limit';

/** The SQL of `user_white_lists` (migration 035). */
export function userWhiteListsRepository(database: Database) {
  const { db, dialect } = database;

  /** Runs `change` in a transaction that holds `userId`'s list alone (SQLite: a write first, so the lock is taken before any read). */
  function changing<T>(userId: number, change: (trx: Kysely<Schema>) => Promise<T>): Promise<T> {
    return db.transaction().execute(async (trx) => {
      await dialect.choose(serializeListChanges)(trx, userId);
      // Takes SQLite's write lock (a write that changes nothing, and moves no credentials version).
      await trx.updateTable('user_white_lists').set({ user_id: userId }).where('id', '=', -1).execute();
      return change(trx);
    });
  }

  return {
    /** The user's entries at positions `offset` .. `offset + limit - 1`, in id order. */
    async page(userId: number, limit: number, offset: number): Promise<UserWhiteList[]> {
      const rows = await db.selectFrom('user_white_lists').select(columns).where('user_id', '=', userId).orderBy('id').limit(limit).offset(offset).execute();
      return rows.map(toEntry);
    },

    async count(userId: number): Promise<number> {
      const row = await db.selectFrom('user_white_lists').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async find(userId: number, id: number): Promise<UserWhiteList | undefined> {
      const row = await db.selectFrom('user_white_lists').select(columns).where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
      return row && toEntry(row);
    },

    /** Every range of the user's list (authentication reads it with a verification: users/allowed-addresses.ts). */
    async rangesOf(userId: number): Promise<string[]> {
      const rows = await db.selectFrom('user_white_lists').select('ip').where('user_id', '=', userId).orderBy('id').execute();
      return rows.map((row) => row.ip);
    },

    /** Adds `ip` to the user's list, unless the user is not there, already has it, or has `max` entries. */
    async add(userId: number, ip: string, description: string, max: number, now: Date): Promise<UserWhiteList | ListRefusal> {
      return changing(userId, async (trx) => {
        const user = await trx.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
        if (!user) return 'no_user';
        const held = await trx.selectFrom('user_white_lists').select(['ip']).where('user_id', '=', userId).execute();
        if (held.some((row) => row.ip === ip)) return 'duplicate';
        if (held.length >= max) return 'limit';
        const at = now.toISOString();
        const row = await trx.insertInto('user_white_lists').values({ user_id: userId, ip, description, created_at: at, updated_at: at }).returning(columns).executeTakeFirstOrThrow();
        return toEntry(row);
      });
    },

    /** Changes entry `id` of the user (the fields given); the entry as it was and as it is. */
    async update(userId: number, id: number, fields: { ip?: string; description?: string }, now: Date): Promise<{ before: UserWhiteList; after: UserWhiteList } | ListRefusal> {
      return changing(userId, async (trx) => {
        const row = await trx.selectFrom('user_white_lists').select(columns).where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
        if (!row) return 'not_found';
        if (fields.ip !== undefined && fields.ip !== row.ip) {
          const taken = await trx.selectFrom('user_white_lists').select('id').where('user_id', '=', userId).where('ip', '=', fields.ip).executeTakeFirst();
          if (taken) return 'duplicate';
        }
        const updated = await trx.updateTable('user_white_lists').set({ ...fields, updated_at: now.toISOString() }).where('id', '=', id).returning(columns).executeTakeFirstOrThrow();
        return { before: toEntry(row), after: toEntry(updated) };
      });
    },

    /** Removes entry `id` of the user; the entry removed, if there was one. */
    async remove(userId: number, id: number): Promise<UserWhiteList | undefined> {
      const row = await db.deleteFrom('user_white_lists').where('user_id', '=', userId).where('id', '=', id).returning(columns).executeTakeFirst();
      return row && toEntry(row);
    },
  };
}

export type UserWhiteListsRepository = ReturnType<typeof userWhiteListsRepository>;
