import { type ExpressionBuilder, type Kysely, type Selectable, sql, type UpdateQueryBuilder } from 'kysely';
import type { Role, User, UserCredentials, UserStatus } from './user.js';
import type { Database } from '../db/database.js';
import type { PerDatabase } from '../db/dialects/dialect.js';
import type { Schema, UsersTable } from '../db/schema.js';
import { ADMIN_ROLE_ID } from '../roles/permissions.js';
import type { HeldRoles } from '../roles/role.js';
import { groupRoles, heldRoles, heldRolesOf, unknownRoleIds } from '../roles/roles.store.js';
import { userGroupExists } from '../user-groups/user-groups.store.js';
import { likeContaining } from '../db/dialects/text/text.js';

export interface NewUser {
  login: string;
  email: string;
  password_hash: string;
  first_name: string;
  last_name: string;
  /** The ids of the roles it holds (at least one; checked to exist by the service). */
  role_ids: number[];
  /** Its billing bucket (checked to exist by the service); none when not given. */
  bucket_id?: number | null;
  /** Its user group (checked to exist by the service); none when not given. */
  user_group_id?: number | null;
  time_zone: string | null;
  locale: string | null;
}

export type UserChanges = Partial<Pick<NewUser, 'login' | 'email' | 'password_hash' | 'first_name' | 'last_name' | 'role_ids' | 'bucket_id' | 'user_group_id' | 'time_zone' | 'locale'>>;

/** The description of the key `make_new_api_key` makes (and of each user's key migration 021 carried over). */
export const DEFAULT_KEY_DESCRIPTION = 'default';

/** Thrown when a login or email is taken; `field` names which. */
export class DuplicateValue extends Error {
  constructor(readonly field: string) {
    super(`${field} is already taken`);
  }
}

const publicColumns = [
  'id', 'login', 'email', 'first_name', 'last_name', 'status', 'role', 'time_zone', 'locale',
  'created_at', 'updated_at', 'activated_at', 'suspend_at', 'deleted_at', 'password_changed_at', 'bucket_id', 'user_group_id', 'totp_enabled', 'registered_yubikey',
] as const;

type PublicRow = Pick<Selectable<UsersTable>, (typeof publicColumns)[number]>;

const toDate = (value: string | null): Date | null => (value === null ? null : new Date(value));

/**
 * What the users list may be narrowed to (docs/api.md#users-list-filters): `q` a substring of the
 * login, email, first or last name in any case; a status; a role held (its own, not its group's); a group.
 */
export interface UserFilters {
  q?: string;
  status?: UserStatus;
  role_id?: number;
  user_group_id?: number;
  /** Only this user (what a user without users.read may see). */
  only_id?: number;
}

/** Whether `filters` narrow the list at all. */
const narrows = (filters: UserFilters) => Object.values(filters).some((value) => value !== undefined);

/**
 * A user's roles and permissions: its own roles, shown in its record, and the permissions of those
 * and of its group's roles (docs/security.md#user-groups).
 */
function toUser(row: PublicRow, held: HeldRoles, group?: HeldRoles): User {
  return {
    id: Number(row.id),
    login: row.login,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    status: row.status as UserStatus,
    role: row.role as Role,
    time_zone: row.time_zone,
    locale: row.locale,
    created_at: new Date(row.created_at),
    updated_at: new Date(row.updated_at),
    activated_at: toDate(row.activated_at),
    suspend_at: toDate(row.suspend_at),
    deleted_at: toDate(row.deleted_at),
    password_changed_at: toDate(row.password_changed_at),
    bucket_id: row.bucket_id === null ? null : Number(row.bucket_id),
    user_group_id: row.user_group_id === null ? null : Number(row.user_group_id),
    totp_enabled: Number(row.totp_enabled) === 1,
    registered_yubikey: Number(row.registered_yubikey) === 1,
    two_factor_required: [...held.roles, ...(group?.roles ?? [])].some((role) => role.requires_two_factor),
    roles: held.roles,
    permissions: group === undefined || group.permissions.size === 0 ? held.permissions : new Set([...held.permissions, ...group.permissions]),
  };
}

/**
 * `rows` as users, with the roles each holds (one more statement, on `db`: a transaction's own) and,
 * for members of a group, the group's (one more).
 */
async function toUsers(db: Kysely<Schema>, rows: PublicRow[]): Promise<User[]> {
  const held = await heldRoles(db, rows.map((row) => Number(row.id)));
  const groupIds = rows.flatMap((row) => (row.user_group_id === null ? [] : [Number(row.user_group_id)]));
  const groups = groupIds.length === 0 ? undefined : await groupRoles(db, groupIds);
  return rows.map((row) => toUser(row, heldRolesOf(held, Number(row.id)), row.user_group_id === null ? undefined : groups?.get(Number(row.user_group_id))));
}

async function toOneUser(db: Kysely<Schema>, row: PublicRow): Promise<User>;
async function toOneUser(db: Kysely<Schema>, row: PublicRow | undefined): Promise<User | undefined>;
async function toOneUser(db: Kysely<Schema>, row: PublicRow | undefined): Promise<User | undefined> {
  return row && (await toUsers(db, [row]))[0];
}

/** True for a row that is not an active administrator, or when another active administrator exists. */
function notLastActiveAdmin(eb: ExpressionBuilder<Schema, 'users'>, id: number) {
  return eb.or([
    eb('role', '<>', 'admin'),
    eb('status', '<>', 'active'),
    eb.exists(
      eb.selectFrom('users as other').select('other.id')
        .where('other.role', '=', 'admin').where('other.status', '=', 'active').where('other.id', '<>', id),
    ),
  ]);
}

/** Rows whose login is `name`, or whose email is `name` in any case (what a credential names). */
const matchesLoginOrEmail = (name: string) => (eb: ExpressionBuilder<Schema, 'users'>) =>
  eb.or([eb('login', '=', name), eb('email', '=', name.toLowerCase())]);

/**
 * Rows whose login or email is one of `names` (each in lower case) in any case: through the index of
 * `lower(login)` (migration 013) and the unique one of `email` (stored in lower case).
 */
const namedInAnyCase = (names: string[]) => (eb: ExpressionBuilder<Schema, 'users'>) =>
  eb.or([eb(eb.fn<string>('lower', ['login']), 'in', names), eb('email', 'in', names)]);

/** row_blocks counts users per block of this many ids (migration 004): block = id >> 10 ... */
const SMALL_BLOCK = 1024;
/** ... and per block of 32 small ones: block = id >> 15. */
const LARGE_BLOCK = 32_768;

/** An arbitrary, fixed advisory-lock key for changes that could leave no active administrator. */
const ADMINISTRATORS_LOCK = 7_302_114;

/** Inside a transaction: waits until no other transaction is changing administrators. */
const serializeAdministratorChanges: PerDatabase<(trx: Kysely<Schema>) => Promise<void>> = {
  // One writer at a time already: a transaction that checks for another administrator cannot race one.
  sqlite: async () => {},
  // PostgreSQL checks the "another active administrator" guard against a snapshot per statement, so
  // two administrators suspending each other at once could both succeed without this lock.
  postgres: async (trx) => {
    await sql`select pg_advisory_xact_lock(${ADMINISTRATORS_LOCK})`.execute(trx);
  },
};

const withoutRoles = ({ login, email, password_hash, first_name, last_name, time_zone, locale, bucket_id, user_group_id }: NewUser) =>
  ({ login, email, password_hash, first_name, last_name, time_zone, locale, bucket_id: bucket_id ?? null, user_group_id: user_group_id ?? null });

/** Thrown inside a transaction to undo it: the change would take the admin role from the last active administrator. */
class LastAdministrator extends Error {}

/** What a guarded change of a user came to. */
export type ChangeOutcome = { outcome: 'changed'; user: User } | { outcome: 'last_admin' | 'not_found' };

export function usersRepository(database: Database) {
  const { db, dialect } = database;

  /** A unique-constraint violation as the DuplicateValue it means; anything else as it is. */
  function asDuplicateValue(error: unknown): unknown {
    const column = dialect.constraints.uniqueViolationColumn(error);
    return column ? new DuplicateValue(column) : error;
  }
  /**
   * Runs an update of user `id`; with `guard`, only if it leaves an active administrator, one such
   * change at a time. The updated row, or undefined when none was (no such user, or the guard held).
   */
  async function guardedUpdate(
    guard: boolean,
    id: number,
    build: (trx: Kysely<Schema>) => UpdateQueryBuilder<Schema, 'users', 'users', object>,
  ): Promise<PublicRow | undefined> {
    if (!guard) return build(db).returning(publicColumns).executeTakeFirst();
    return db.transaction().execute(async (trx) => {
      await dialect.choose(serializeAdministratorChanges)(trx);
      return build(trx).where((eb) => notLastActiveAdmin(eb, id)).returning(publicColumns).executeTakeFirst();
    }).finally(() => database.transactionEnded('users')); // its end moves the users' version again (Database.transactionEnded)
  }

  /**
   * Users at positions `offset` .. `offset + limit - 1` of the id-ordered list, in one statement, so
   * the blocks it seeks by and the users it reads are one snapshot (a user deleted between two
   * statements would shift the page). A running sum over the large blocks finds those holding the
   * range, one over their (at most 32 each) small blocks finds the small ones, and the users are read
   * by id between them, skipping fewer than 1,024.
   */
  async function pageByBlocks(limit: number, offset: number): Promise<PublicRow[]> {
    const to = offset + limit;
    const smallPerLarge = LARGE_BLOCK / SMALL_BLOCK;
    const { rows } = await sql<PublicRow>`
      with large as (
        select block, row_count, sum(row_count) over (order by block) as through
        from row_blocks where table_name = 'users' and block_size = ${LARGE_BLOCK}
      ), chosen as (
        select min(block) as first_large, max(block) as last_large, min(through - row_count) as users_before
        from large where through > ${offset} and through - row_count < ${to}
      ), small as (
        -- Scalar subqueries, not a join: the database reads chosen once and seeks the small blocks by key.
        select block, row_count, (select users_before from chosen) + sum(row_count) over (order by block) as through
        from row_blocks
        where table_name = 'users' and block_size = ${SMALL_BLOCK}
          and block >= (select first_large from chosen) * ${smallPerLarge}
          and block < ((select last_large from chosen) + 1) * ${smallPerLarge}
      ), span as (
        select min(block) as first_block, max(block) as last_block, min(through - row_count) as users_before
        from small where through > ${offset} and through - row_count < ${to}
      )
      select ${sql.join(publicColumns.map((column) => sql.ref(column)))}
      from users
      -- Both bounds, so PostgreSQL walks the id index even before it has statistics on a new table.
      where id >= (select first_block from span) * ${SMALL_BLOCK}
        and id < ((select last_block from span) + 1) * ${SMALL_BLOCK}
      order by id
      limit ${limit} offset ${offset} - coalesce((select users_before from span), 0)`.execute(db);
    return rows;
  }

  /**
   * The users `filters` keep. `q` compares the folded columns (dialect.text: every letter folded on
   * both databases) with a LIKE pattern in which `%`, `_` and `\\` stand for themselves. The other
   * filters read their indexes (migration 020: `(status, id)`, `(user_group_id, id)`; migration 016:
   * `user_roles_role`).
   */
  function matching(filters: UserFilters) {
    const lower = sql.raw(dialect.text.lowerFunction);
    return (eb: ExpressionBuilder<Schema, 'users'>) => {
      const conditions = [];
      if (filters.only_id !== undefined) conditions.push(eb('users.id', '=', filters.only_id));
      if (filters.status !== undefined) conditions.push(eb('users.status', '=', filters.status));
      if (filters.user_group_id !== undefined) conditions.push(eb('users.user_group_id', '=', filters.user_group_id));
      if (filters.role_id !== undefined) {
        conditions.push(eb('users.id', 'in', eb.selectFrom('user_roles').select('user_roles.user_id').where('user_roles.role_id', '=', filters.role_id)));
      }
      if (filters.q !== undefined) {
        const pattern = likeContaining(filters.q.toLowerCase());
        conditions.push(eb.or((['login', 'email', 'first_name', 'last_name'] as const).map((column) =>
          eb(sql`${lower}(${sql.ref(`users.${column}`)})`, 'like', sql<string>`${pattern} escape '\\'`))));
      }
      return eb.and(conditions);
    };
  }

  return {
    /** Inserts the user and gives it its roles, in one transaction. */
    async create(user: NewUser, now: Date): Promise<User> {
      const at = now.toISOString();
      const fields = withoutRoles(user);
      const roleIds = user.role_ids;
      try {
        return await db.transaction().execute(async (trx) => {
          const { id } = await trx
            .insertInto('users')
            // role: what migration 016's triggers make of the roles given next.
            .values({ ...fields, role: 'user', status: 'active', created_at: at, updated_at: at, activated_at: at, password_changed_at: at })
            .returning('id')
            .executeTakeFirstOrThrow();
          await trx.insertInto('user_roles').values([...new Set(roleIds)].map((role_id) => ({ user_id: Number(id), role_id }))).execute();
          const row = await trx.selectFrom('users').select(publicColumns).where('id', '=', id).executeTakeFirstOrThrow();
          return toOneUser(trx, row);
        }).finally(() => database.transactionEnded('users'));
      } catch (error) {
        throw asDuplicateValue(error);
      }
    },

    /** Inserts many users with their roles in one transaction (imports, benchmarks); duplicates fail the whole batch. */
    async createMany(users: NewUser[], now: Date): Promise<void> {
      if (users.length === 0) return;
      const at = now.toISOString();
      const stamps = { role: 'user', status: 'active', created_at: at, updated_at: at, activated_at: at, password_changed_at: at };
      const roleIdsOf = new Map(users.map((user) => [user.login, user.role_ids]));
      await db.transaction().execute(async (trx) => {
        const rows = await trx.insertInto('users').values(users.map((user) => ({ ...withoutRoles(user), ...stamps }))).returning(['id', 'login']).execute();
        const links = rows.flatMap((row) => [...new Set(roleIdsOf.get(row.login) ?? [])].map((role_id) => ({ user_id: Number(row.id), role_id })));
        for (let i = 0; i < links.length; i += 5_000) await trx.insertInto('user_roles').values(links.slice(i, i + 5_000)).execute();
      }).finally(() => database.transactionEnded('users')).catch((error: unknown) => {
        throw asDuplicateValue(error);
      });
    },

    /**
     * Applies `changes`. A new password hash also stamps password_changed_at and bumps the session
     * epoch, which ends every session of the user. New `role_ids` replace the user's roles in the same
     * transaction; taking the admin role from the last active administrator is refused
     * ('last_admin', nothing changed).
     */
    async update(id: number, changes: UserChanges, now: Date): Promise<ChangeOutcome> {
      const at = now.toISOString();
      const { role_ids: roleIds, ...fields } = changes;
      const credentials = fields.password_hash === undefined ? {} : {
        password_changed_at: at,
        session_epoch: sql<number>`session_epoch + 1`,
      };
      const setFields = (trx: Kysely<Schema>) => trx.updateTable('users').set({ ...fields, ...credentials, updated_at: at }).where('id', '=', id).returning(publicColumns);
      try {
        if (roleIds === undefined) {
          const row = await setFields(db).executeTakeFirst();
          if (row) return { outcome: 'changed', user: await toOneUser(db, row) };
          return { outcome: 'not_found' };
        }
        return await db.transaction().execute(async (trx): Promise<ChangeOutcome> => {
          await dialect.choose(serializeAdministratorChanges)(trx);
          // A write first, so SQLite holds the write lock from the start.
          if (!(await setFields(trx).executeTakeFirst())) return { outcome: 'not_found' };
          if (!roleIds.includes(ADMIN_ROLE_ID)) {
            const removed = await trx.deleteFrom('user_roles')
              .where('user_id', '=', id).where('role_id', '=', ADMIN_ROLE_ID)
              .where((eb) => eb.exists(eb.selectFrom('users').select('users.id').where('users.id', '=', id).where((users) => notLastActiveAdmin(users, id))))
              .executeTakeFirst();
            const stillHeld = Number(removed.numDeletedRows) === 0 && await trx.selectFrom('user_roles').select('role_id')
              .where('user_id', '=', id).where('role_id', '=', ADMIN_ROLE_ID).executeTakeFirst();
            if (stillHeld) throw new LastAdministrator();
          }
          await trx.deleteFrom('user_roles').where('user_id', '=', id).where('role_id', 'not in', [...roleIds, ADMIN_ROLE_ID]).execute();
          await trx.insertInto('user_roles').values([...new Set(roleIds)].map((role_id) => ({ user_id: id, role_id })))
            .onConflict((conflict) => conflict.columns(['user_id', 'role_id']).doNothing()).execute();
          const row = await trx.selectFrom('users').select(publicColumns).where('id', '=', id).executeTakeFirstOrThrow();
          return { outcome: 'changed', user: await toOneUser(trx, row) };
        }).finally(() => database.transactionEnded('users'));
      } catch (error) {
        if (error instanceof LastAdministrator) return { outcome: 'last_admin' };
        throw asDuplicateValue(error);
      }
    },

    /**
     * Moves a user to `status` in one statement that refuses to leave no active administrator:
     * 'changed', 'last_admin' (nothing changed), or 'not_found'. Leaving `active` bumps the session
     * epoch, which ends every session of the user.
     */
    async changeStatus(id: number, status: UserStatus, now: Date): Promise<ChangeOutcome> {
      const at = now.toISOString();
      const stamps =
        status === 'active' ? { activated_at: at, suspend_at: null, deleted_at: null }
        : status === 'suspended' ? { suspend_at: at, session_epoch: sql<number>`session_epoch + 1` }
        : { deleted_at: at, session_epoch: sql<number>`session_epoch + 1` };
      const row = await guardedUpdate(status !== 'active', id, (trx) =>
        trx.updateTable('users').set({ status, ...stamps, updated_at: at }).where('id', '=', id),
      );
      if (row) return { outcome: 'changed', user: await toOneUser(db, row) };
      return { outcome: (await this.findById(id)) ? 'last_admin' : 'not_found' };
    },

    /** Removes the record for good; false when there was none. */
    async remove(id: number): Promise<boolean> {
      const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /**
     * Makes `apiKeyHash` the user's default API key (docs/api.md#make-a-new-api-key): the default key
     * it had (the one the last call made, or migration 021 carried over) is revoked, its other keys
     * stay. `users.api_key_hash` follows it, for processes of the previous version during an upgrade.
     * Ends the user's sessions, since a session may have been opened with the old key.
     */
    async setApiKeyHash(id: number, apiKeyHash: string, now: Date): Promise<User | undefined> {
      const at = now.toISOString();
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('users')
          .set({ api_key_hash: apiKeyHash, session_epoch: sql<number>`session_epoch + 1`, updated_at: at })
          .where('id', '=', id)
          .returning(publicColumns)
          .executeTakeFirst();
        if (!row) return undefined;
        await trx.deleteFrom('user_api_keys').where('user_id', '=', id).where('is_default', '=', 1).execute();
        await trx.insertInto('user_api_keys').values({ user_id: id, description: DEFAULT_KEY_DESCRIPTION, key_hash: apiKeyHash, is_default: 1, created_at: at }).execute();
        return toOneUser(trx, row);
      }).finally(() => database.transactionEnded('users'));
    },

    /**
     * Which of `login` and `email` another user (not `exceptId`) already has, in any case. A login
     * counts as taken by another user's email too, and an email by another user's login, since either
     * may be used to sign in and to name the user (docs/security.md#one-name-one-account).
     */
    async takenFields(values: { login?: string; email?: string }, exceptId?: number): Promise<Array<'login' | 'email'>> {
      const login = values.login?.toLowerCase();
      const email = values.email?.toLowerCase();
      const names = [...new Set([login, email].filter((n): n is string => n !== undefined))];
      if (names.length === 0) return [];
      let query = db.selectFrom('users').select(['login', 'email']).where(namedInAnyCase(names));
      if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
      const rows = await query.limit(4).execute();
      const holds = (name: string | undefined) =>
        name !== undefined && rows.some((row) => row.login.toLowerCase() === name || row.email === name);
      const taken: Array<'login' | 'email'> = [];
      if (holds(login)) taken.push('login');
      if (holds(email)) taken.push('email');
      return taken;
    },

    async findById(id: number): Promise<User | undefined> {
      const row = await db.selectFrom('users').select(publicColumns).where('id', '=', id).executeTakeFirst();
      return toOneUser(db, row);
    },

    /**
     * The users whose login or email is `name` in any case (at most 3). More than one is a collision
     * cmi no longer lets happen (takenFields) but an older database may hold: the caller must not choose.
     */
    async findAllByLoginOrEmail(name: string): Promise<User[]> {
      const rows = await db.selectFrom('users').select(publicColumns).where(namedInAnyCase([name.toLowerCase()])).orderBy('id').limit(3).execute();
      return toUsers(db, rows);
    },

    /** Whether billing bucket `id` exists. */
    async bucketExists(id: number): Promise<boolean> {
      return (await db.selectFrom('billing_buckets').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    },

    /** Whether user group `id` exists. */
    userGroupExists: (id: number) => userGroupExists(db, id),

    /** Of `ids`, those no role has. */
    unknownRoleIds: (ids: readonly number[]) => unknownRoleIds(db, ids),

    /** The user's password hash (to check a current password): never rendered. */
    async passwordHash(id: number): Promise<string | undefined> {
      const row = await db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirst();
      return row?.password_hash;
    },

    /**
     * What authentication checks, for the one user whose login is `loginOrEmail` or whose email is it
     * in any case: never rendered. With `apiKeyHash` (the SHA-256 of the password presented), also
     * which of the user's API keys has that hash, if one does (docs/security.md#api-keys).
     */
    async findCredentials(loginOrEmail: string, apiKeyHash?: string): Promise<UserCredentials | undefined> {
      const rows = await db
        .selectFrom('users')
        .select([...publicColumns, 'password_hash', 'session_epoch'])
        .select((eb) => (apiKeyHash === undefined ? sql<null>`null` : eb.selectFrom('user_api_keys').select('user_api_keys.id')
          .whereRef('user_api_keys.user_id', '=', 'users.id').where('user_api_keys.key_hash', '=', apiKeyHash)).as('api_key_id'))
        .where(matchesLoginOrEmail(loginOrEmail))
        .limit(2)
        .execute();
      // Two accounts under one name (an older database: users/name-collisions.ts reports them) is no
      // account: the password is checked against neither, so the name cannot sign in to the wrong one.
      const row = rows.length === 1 ? rows[0] : undefined;
      return row && {
        user: await toOneUser(db, row),
        password_hash: row.password_hash,
        api_key_id: row.api_key_id === null || row.api_key_id === undefined ? null : Number(row.api_key_id),
        session_epoch: Number(row.session_epoch),
      };
    },

    /** The user and its session epoch, which a session cookie must carry to be valid. */
    async findWithSessionEpoch(id: number): Promise<{ user: User; session_epoch: number } | undefined> {
      const row = await db
        .selectFrom('users')
        .select([...publicColumns, 'session_epoch'])
        .where('id', '=', id)
        .executeTakeFirst();
      return row && { user: await toOneUser(db, row), session_epoch: Number(row.session_epoch) };
    },

    /**
     * One page in id order. `onlyId` narrows the list to that one user (what a non-admin may see).
     * Reads only the ids between the blocks of 1,024 that hold the page's first and last positions,
     * so the database skips fewer than 1,024 users however deep the page is.
     */
    async page(limit: number, offset: number, filters: UserFilters = {}): Promise<User[]> {
      if (narrows(filters)) {
        const rows = await db.selectFrom('users').select(publicColumns).where(matching(filters)).orderBy('id').limit(limit).offset(offset).execute();
        return toUsers(db, rows);
      }
      return toUsers(db, await pageByBlocks(limit, offset));
    },

    /** All users, summed from row_blocks (migration 004) rather than counted; those `filters` keep, counted. */
    async count(filters: UserFilters = {}): Promise<number> {
      if (narrows(filters)) {
        const { n } = await db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).where(matching(filters)).executeTakeFirstOrThrow();
        return Number(n);
      }
      const row = await db
        .selectFrom('row_blocks')
        .select((eb) => eb.fn.sum<number | string | null>('row_count').as('n'))
        .where('table_name', '=', 'users')
        .where('block_size', '=', LARGE_BLOCK)
        .executeTakeFirstOrThrow();
      return Number(row.n ?? 0);
    },
  };
}

export type UsersRepository = ReturnType<typeof usersRepository>;
