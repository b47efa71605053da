import type { Kysely, Selectable } from 'kysely';
import type { Role, User, UserCredentials, UserStatus } from '../domain/records.js';
import { uniqueViolationColumn } from './dialect.js';
import type { Schema, UsersTable } from './schema.js';

export interface NewUser {
  login: string;
  email: string;
  password_hash: string;
  first_name: string;
  last_name: string;
  role: Role;
  time_zone: string | null;
  locale: string | null;
}

/** Thrown when a login or email is taken; `field` names which. */
export class DuplicateValue extends Error {
  constructor(readonly field: string) {
    super(`${field} is already taken`);
  }
}

const publicColumns = [
  'id', 'login', 'email', 'first_name', 'last_name', 'status', 'role', 'time_zone', 'locale',
  'created_at', 'updated_at', 'activated_at', 'suspend_at', 'deleted_at', 'password_changed_at',
] as const;

type PublicRow = Pick<Selectable<UsersTable>, (typeof publicColumns)[number]>;

const toDate = (value: string | null): Date | null => (value === null ? null : new Date(value));

function toUser(row: PublicRow): User {
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
  };
}

export function usersRepository(db: Kysely<Schema>) {
  return {
    async create(user: NewUser, now: Date): Promise<User> {
      const at = now.toISOString();
      try {
        const row = await db
          .insertInto('users')
          .values({ ...user, status: 'active', created_at: at, updated_at: at, activated_at: at, password_changed_at: at })
          .returning(publicColumns)
          .executeTakeFirstOrThrow();
        return toUser(row);
      } catch (error) {
        const column = uniqueViolationColumn(error);
        if (column) throw new DuplicateValue(column);
        throw error;
      }
    },

    async findById(id: number): Promise<User | undefined> {
      const row = await db.selectFrom('users').select(publicColumns).where('id', '=', id).executeTakeFirst();
      return row && toUser(row);
    },

    /** Looks a user up by login, or by email when no login matches. */
    async findCredentials(loginOrEmail: string): Promise<UserCredentials | undefined> {
      const rows = await db
        .selectFrom('users')
        .select([...publicColumns, 'password_hash', 'api_key_hash', 'session_epoch'])
        .where((eb) => eb.or([eb('login', '=', loginOrEmail), eb('email', '=', loginOrEmail.toLowerCase())]))
        .limit(2)
        .execute();
      const row = rows.find((r) => r.login === loginOrEmail) ?? rows[0];
      return row && {
        user: toUser(row),
        password_hash: row.password_hash,
        api_key_hash: row.api_key_hash,
        session_epoch: Number(row.session_epoch),
      };
    },

    async sessionEpoch(id: number): Promise<{ user: User; session_epoch: number } | undefined> {
      const row = await db
        .selectFrom('users')
        .select([...publicColumns, 'session_epoch'])
        .where('id', '=', id)
        .executeTakeFirst();
      return row && { user: toUser(row), session_epoch: Number(row.session_epoch) };
    },

    /** One page in id order. `onlyId` narrows the list to that one user (what a non-admin may see). */
    async page(limit: number, offset: number, onlyId?: number): Promise<User[]> {
      let query = db.selectFrom('users').select(publicColumns).orderBy('id').limit(limit).offset(offset);
      if (onlyId !== undefined) query = query.where('id', '=', onlyId);
      return (await query.execute()).map(toUser);
    },

    async count(onlyId?: number): Promise<number> {
      let query = db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n'));
      if (onlyId !== undefined) query = query.where('id', '=', onlyId);
      const row = await query.executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

export type UsersRepository = ReturnType<typeof usersRepository>;
