import type { Role, User } from '../domain/records.js';
import type { ResourceDefinition, ResourceRecord } from './definition.js';

export const roleResource: ResourceDefinition = {
  root: 'role',
  plural: 'roles',
  fields: [
    ['id', 'integer'],
    ['label', 'string'],
    ['identifier', 'string'],
  ],
  values: { identifier: ['admin', 'user'] },
};

/** The user record of docs/api.md#users; never a password, hash or key other than a just-made `api_key`. */
export const userResource: ResourceDefinition = {
  root: 'user',
  plural: 'users',
  fields: [
    ['id', 'integer'],
    ['login', 'string'],
    ['email', 'string'],
    ['first_name', 'string'],
    ['last_name', 'string'],
    ['status', 'string'],
    ['time_zone', 'string'],
    ['locale', 'string'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
    ['activated_at', 'datetime'],
    ['suspend_at', 'datetime'],
    ['deleted_at', 'datetime'],
    ['password_changed_at', 'datetime'],
    ['roles', { arrayOf: roleResource }],
    ['api_key', 'string'],
  ],
  optional: new Set(['api_key']),
  nullable: new Set(['time_zone', 'locale', 'activated_at', 'suspend_at', 'deleted_at', 'password_changed_at']),
  values: { status: ['active', 'suspended', 'deleted'] },
};

/** cmi's two fixed roles, with OnApp-style numeric ids. */
const ROLES: Record<Role, { id: number; label: string; identifier: Role }> = {
  admin: { id: 1, label: 'Administrator', identifier: 'admin' },
  user: { id: 2, label: 'User', identifier: 'user' },
};

export function presentUser(user: User, extra: { api_key?: string } = {}): ResourceRecord {
  const { role, ...fields } = user;
  return { ...fields, roles: [ROLES[role]], ...extra };
}
