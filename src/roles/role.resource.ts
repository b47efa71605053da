import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** A permission of the catalogue (docs/api.md#permissions). */
export const permissionResource = {
  root: 'permission',
  plural: 'permissions',
  fields: [
    ['id', 'integer'],
    ['identifier', 'string'],
    ['label', 'string'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
  ],
} as const satisfies ResourceDefinition;

/** A role with its permissions (docs/api.md#roles). */
export const roleResource = {
  root: 'role',
  plural: 'roles',
  fields: [
    ['id', 'integer'],
    ['label', 'string'],
    ['identifier', 'string'],
    ['system', 'boolean'],
    ['requires_two_factor', 'boolean'],
    ['users_count', 'integer'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
    ['permissions', { arrayOf: permissionResource }],
  ],
} as const satisfies ResourceDefinition;

/**
 * A role as a holder's record shows it (a user's roles, a user group's): the role of /roles with its
 * permissions, without users_count.
 */
export const heldRoleResource = {
  root: 'role',
  plural: 'roles',
  schema: 'user_role',
  fields: [
    ['id', 'integer'],
    ['label', 'string'],
    ['identifier', 'string'],
    ['system', 'boolean'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
    ['permissions', { arrayOf: permissionResource }],
  ],
} as const satisfies ResourceDefinition;
