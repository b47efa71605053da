import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import type { Schema } from '../db/schema.js';
import type { HeldRoles, PermissionRecord, Role } from './role.js';
import { USER_ROLE_ID } from './permissions.js';

const NO_ROLES: HeldRoles = { roles: [], permissions: new Set() };

/** Who holds roles: users (`user_roles`) or user groups (`user_group_roles`, whose roles apply to their members). */
type RoleLink = { table: 'user_roles'; holder: 'user_id' } | { table: 'user_group_roles'; holder: 'user_group_id' };

/**
 * The roles each of `holderIds` holds through `link`, with their permissions, in one statement (`db`
 * may be a transaction). A holder holding none is absent from the map.
 */
async function rolesHeldThrough(db: Kysely<Schema>, link: RoleLink, holderIds: readonly number[]): Promise<Map<number, HeldRoles>> {
  const held = new Map<number, HeldRoles>();
  if (holderIds.length === 0) return held;
  // Either link table has the same two columns; kysely types one of them.
  const { table, holder } = link as { table: 'user_roles'; holder: 'user_id' };
  const rows = await db
    .selectFrom(table)
    .innerJoin('roles', 'roles.id', `${table}.role_id`)
    .leftJoin('role_permissions', 'role_permissions.role_id', 'roles.id')
    .leftJoin('permissions', 'permissions.id', 'role_permissions.permission_id')
    .select([
      `${table}.${holder} as holder_id`, 'roles.id as role_id', 'roles.label as role_label', 'roles.identifier as role_identifier',
      'roles.system', 'roles.requires_two_factor', 'roles.created_at as role_created_at', 'roles.updated_at as role_updated_at',
      'permissions.id as permission_id', 'permissions.identifier as permission_identifier', 'permissions.label as permission_label',
      'permissions.created_at as permission_created_at', 'permissions.updated_at as permission_updated_at',
    ])
    .where(`${table}.${holder}`, 'in', [...new Set(holderIds)])
    .orderBy(`${table}.${holder}`).orderBy('roles.id').orderBy('permissions.id')
    .execute();
  for (const row of rows) {
    const holderId = Number(row.holder_id);
    let entry = held.get(holderId);
    if (entry === undefined) held.set(holderId, (entry = { roles: [], permissions: new Set() }));
    let role = entry.roles.at(-1);
    if (role === undefined || role.id !== Number(row.role_id)) {
      role = {
        id: Number(row.role_id), label: row.role_label, identifier: row.role_identifier, system: Number(row.system) === 1,
        requires_two_factor: Number(row.requires_two_factor) === 1,
        created_at: new Date(row.role_created_at), updated_at: new Date(row.role_updated_at), permissions: [],
      };
      entry.roles.push(role);
    }
    if (row.permission_id !== null && row.permission_identifier !== null) {
      role.permissions.push(toPermission({
        id: row.permission_id, identifier: row.permission_identifier, label: row.permission_label ?? '',
        created_at: row.permission_created_at ?? '', updated_at: row.permission_updated_at ?? '',
      }));
      (entry.permissions as Set<string>).add(row.permission_identifier);
    }
  }
  return held;
}

/** The roles each of `userIds` holds itself, with their permissions, in one statement. */
export const heldRoles = (db: Kysely<Schema>, userIds: readonly number[]) => rolesHeldThrough(db, { table: 'user_roles', holder: 'user_id' }, userIds);

/**
 * The roles each of `groupIds` holds, with their permissions, in one statement. Users read it with a
 * user: a group's roles apply to its members (docs/security.md#user-groups).
 */
export const groupRoles = (db: Kysely<Schema>, groupIds: readonly number[]) => rolesHeldThrough(db, { table: 'user_group_roles', holder: 'user_group_id' }, groupIds);

export const heldRolesOf = (held: Map<number, HeldRoles>, userId: number): HeldRoles => held.get(userId) ?? NO_ROLES;

function toPermission(row: { id: number; identifier: string; label: string; created_at: string; updated_at: string }): PermissionRecord {
  return { id: Number(row.id), identifier: row.identifier, label: row.label, created_at: new Date(row.created_at), updated_at: new Date(row.updated_at) };
}

/** Of `ids`, those no role has (in the order given). */
export async function unknownRoleIds(db: Kysely<Schema>, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('roles').select('id').where('id', 'in', [...new Set(ids)]).execute();
  const known = new Set(rows.map((row) => Number(row.id)));
  return ids.filter((id) => !known.has(id));
}

/** Thrown when a role's identifier is taken. */
export class DuplicateIdentifier extends Error {}

export interface RoleFields {
  label: string;
  identifier: string;
  permission_ids: number[];
  /** Whether holders must have a second factor (docs/security.md#second-factor); false when not given. */
  requires_two_factor?: boolean;
}

/** What deleting a role came to. */
export type RoleRemoval = 'removed' | 'not_found' | 'system' | 'in_use' | 'in_group';

/** Roles and the permission catalogue: the only SQL of their tables besides what users read with a user. */
export function rolesRepository(database: Database) {
  const { db, dialect } = database;

  async function rolesByIds(trx: Kysely<Schema>, ids: number[] | undefined, limit?: number, offset?: number): Promise<Role[]> {
    let query = trx.selectFrom('roles')
      .select((eb) => ['id', 'label', 'identifier', 'system', 'requires_two_factor', 'created_at', 'updated_at',
        eb.selectFrom('user_roles').select(eb.fn.countAll<number | string>().as('n')).whereRef('user_roles.role_id', '=', 'roles.id').as('users_count')])
      .orderBy('id');
    if (ids !== undefined) query = query.where('id', 'in', ids.length > 0 ? ids : [-1]);
    if (limit !== undefined) query = query.limit(limit).offset(offset ?? 0);
    const rows = await query.execute();
    if (rows.length === 0) return [];
    const links = await trx.selectFrom('role_permissions').innerJoin('permissions', 'permissions.id', 'role_permissions.permission_id')
      .select(['role_permissions.role_id', 'permissions.id', 'permissions.identifier', 'permissions.label', 'permissions.created_at', 'permissions.updated_at'])
      .where('role_permissions.role_id', 'in', rows.map((row) => Number(row.id)))
      .orderBy('role_permissions.role_id').orderBy('permissions.id')
      .execute();
    return rows.map((row) => ({
      id: Number(row.id), label: row.label, identifier: row.identifier, system: Number(row.system) === 1, requires_two_factor: Number(row.requires_two_factor) === 1,
      users_count: Number(row.users_count ?? 0), created_at: new Date(row.created_at), updated_at: new Date(row.updated_at),
      permissions: links.filter((link) => Number(link.role_id) === Number(row.id)).map(toPermission),
    }));
  }

  function asDuplicate(error: unknown): unknown {
    return dialect.constraints.uniqueViolationColumn(error) ? new DuplicateIdentifier() : error;
  }

  return {
    async page(limit: number, offset: number): Promise<{ items: Role[]; total: number }> {
      const { n } = await db.selectFrom('roles').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const total = Number(n);
      return { items: offset >= total ? [] : await rolesByIds(db, undefined, limit, offset), total };
    },

    async find(id: number): Promise<Role | undefined> {
      return (await rolesByIds(db, [id]))[0];
    },

    async identifierTaken(identifier: string, exceptId?: number): Promise<boolean> {
      let query = db.selectFrom('roles').select('id').where('identifier', '=', identifier);
      if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
      return (await query.executeTakeFirst()) !== undefined;
    },

    async create(fields: RoleFields, now: Date): Promise<Role> {
      const at = now.toISOString();
      try {
        return await db.transaction().execute(async (trx) => {
          const { id } = await trx.insertInto('roles').values({ label: fields.label, identifier: fields.identifier, system: 0, requires_two_factor: fields.requires_two_factor ? 1 : 0, created_at: at, updated_at: at })
            .returning('id').executeTakeFirstOrThrow();
          const ids = [...new Set(fields.permission_ids)];
          if (ids.length > 0) await trx.insertInto('role_permissions').values(ids.map((permission_id) => ({ role_id: Number(id), permission_id }))).execute();
          return (await rolesByIds(trx, [Number(id)]))[0] as Role;
        }).finally(() => database.transactionEnded('users'));
      } catch (error) {
        throw asDuplicate(error);
      }
    },

    /** Changes what `fields` holds; `permission_ids` replace the role's. Undefined when there is no such role. */
    async update(id: number, fields: Partial<RoleFields>, now: Date): Promise<Role | undefined> {
      const { permission_ids: permissionIds, requires_two_factor: requiresTwoFactor, ...named } = fields;
      const columns = requiresTwoFactor === undefined ? named : { ...named, requires_two_factor: requiresTwoFactor ? 1 : 0 };
      try {
        return await db.transaction().execute(async (trx) => {
          const row = await trx.updateTable('roles').set({ ...columns, updated_at: now.toISOString() }).where('id', '=', id).returning('id').executeTakeFirst();
          if (!row) return undefined;
          if (permissionIds !== undefined) {
            await trx.deleteFrom('role_permissions').where('role_id', '=', id).execute();
            const ids = [...new Set(permissionIds)];
            if (ids.length > 0) await trx.insertInto('role_permissions').values(ids.map((permission_id) => ({ role_id: id, permission_id }))).execute();
          }
          return (await rolesByIds(trx, [id]))[0];
        }).finally(() => database.transactionEnded('users'));
      } catch (error) {
        throw asDuplicate(error);
      }
    },

    /**
     * Deletes a role that is not a system role, that no user group holds and that no user holds but users
     * marked deleted (they give it up, and one left with no role gets the role `user`, as a new user
     * would); otherwise says why not.
     */
    async remove(id: number): Promise<RoleRemoval> {
      try {
        return await db.transaction().execute(async (trx) => {
          const role = await trx.selectFrom('roles').select('system').where('id', '=', id).executeTakeFirst();
          if (role === undefined) return 'not_found';
          if (Number(role.system) === 1) return 'system';
          const held = await trx.selectFrom('user_roles').innerJoin('users', 'users.id', 'user_roles.user_id').select('users.id')
            .where('user_roles.role_id', '=', id).where('users.status', '<>', 'deleted').limit(1).executeTakeFirst();
          if (held !== undefined) return 'in_use';
          const inGroup = await trx.selectFrom('user_group_roles').select('user_group_id').where('role_id', '=', id).limit(1).executeTakeFirst();
          if (inGroup !== undefined) return 'in_group';
          const giving = await trx.deleteFrom('user_roles').where('role_id', '=', id).returning('user_id').execute();
          const left = giving.map((row) => Number(row.user_id));
          if (left.length > 0) {
            await trx.insertInto('user_roles').columns(['user_id', 'role_id'])
              .expression((eb) => eb.selectFrom('users').select(['users.id', eb.val(USER_ROLE_ID).as('role_id')]).where('users.id', 'in', left)
                .where((inner) => inner.not(inner.exists(inner.selectFrom('user_roles').select('user_roles.user_id').whereRef('user_roles.user_id', '=', 'users.id')))))
              .execute();
          }
          await trx.deleteFrom('roles').where('id', '=', id).execute();
          return 'removed' as const;
        }).finally(() => database.transactionEnded('users'));
      } catch (error) {
        // On PostgreSQL a user given the role by a transaction that committed while this one waited is
        // not seen by its check; the foreign key refuses the delete instead.
        if (dialect.constraints.isForeignKeyViolation(error)) return 'in_use';
        throw error;
      }
    },

    async permissions(limit: number, offset: number): Promise<{ items: PermissionRecord[]; total: number }> {
      const { n } = await db.selectFrom('permissions').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await db.selectFrom('permissions').select(['id', 'identifier', 'label', 'created_at', 'updated_at']).orderBy('id').limit(limit).offset(offset).execute();
      return { items: rows.map(toPermission), total: Number(n) };
    },

    /** Of `ids`, those no permission has (in the order given). */
    async unknownPermissionIds(ids: readonly number[]): Promise<number[]> {
      if (ids.length === 0) return [];
      const rows = await db.selectFrom('permissions').select('id').where('id', 'in', [...new Set(ids)]).execute();
      const known = new Set(rows.map((row) => Number(row.id)));
      return ids.filter((id) => !known.has(id));
    },
  };
}

export type RolesRepository = ReturnType<typeof rolesRepository>;
