import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.js';
import type { HeldRoles, PermissionRecord, Role } from './role.js';

const NO_ROLES: HeldRoles = { roles: [], permissions: new Set() };

/**
 * The roles each of `userIds` holds, with their permissions, in one statement (`db` may be a
 * transaction). A user holding none is absent from the map.
 */
export async function heldRoles(db: Kysely<Schema>, userIds: readonly number[]): Promise<Map<number, HeldRoles>> {
  const held = new Map<number, HeldRoles>();
  if (userIds.length === 0) return held;
  const rows = await db
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .leftJoin('role_permissions', 'role_permissions.role_id', 'roles.id')
    .leftJoin('permissions', 'permissions.id', 'role_permissions.permission_id')
    .select([
      'user_roles.user_id', 'roles.id as role_id', 'roles.label as role_label', 'roles.identifier as role_identifier',
      'roles.system', 'roles.created_at as role_created_at', 'roles.updated_at as role_updated_at',
      'permissions.id as permission_id', 'permissions.identifier as permission_identifier', 'permissions.label as permission_label',
      'permissions.created_at as permission_created_at', 'permissions.updated_at as permission_updated_at',
    ])
    .where('user_roles.user_id', 'in', [...new Set(userIds)])
    .orderBy('user_roles.user_id').orderBy('roles.id').orderBy('permissions.id')
    .execute();
  for (const row of rows) {
    const userId = Number(row.user_id);
    let entry = held.get(userId);
    if (entry === undefined) held.set(userId, (entry = { roles: [], permissions: new Set() }));
    let role = entry.roles.at(-1);
    if (role === undefined || role.id !== Number(row.role_id)) {
      role = {
        id: Number(row.role_id), label: row.role_label, identifier: row.role_identifier, system: Number(row.system) === 1,
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

export type { Role };
