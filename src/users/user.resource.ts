import type { User } from './user.js';
import { heldRoleResource } from '../roles/role.resource.js';
import type { ResourceDefinition, ResourceRecord } from '../http/render/resource-definition.js';

/** A role as a user record shows it (roles/role.resource.ts). */
export const roleResource = heldRoleResource;

/** The user record of docs/api.md#users; never a password, hash or key other than a just-made `api_key`. */
export const userResource = {
  root: 'user',
  plural: 'users',
  fields: [
    ['id', 'integer'],
    ['login', 'string'],
    ['email', 'string'],
    ['first_name', 'string'],
    ['last_name', 'string'],
    ['status', 'string'],
    ['time_zone', 'string', 'nullable'],
    ['locale', 'string', 'nullable'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
    ['activated_at', 'datetime', 'nullable'],
    ['suspend_at', 'datetime', 'nullable'],
    ['deleted_at', 'datetime', 'nullable'],
    ['password_changed_at', 'datetime', 'nullable'],
    ['roles', { arrayOf: roleResource }],
    ['bucket_id', 'integer', 'nullable'],
    ['user_group_id', 'integer', 'nullable'],
    // OnApp's, of its 6.4 and 4.2 user records (the PHP wrapper's User.php): docs/security.md#second-factor.
    ['totp_enabled', 'boolean'],
    ['registered_yubikey', 'boolean'],
    ['api_key', 'string'],
  ],
  optional: ['api_key'],
  values: { status: ['active', 'suspended', 'deleted'] },
} as const satisfies ResourceDefinition;

export function presentUser(user: User, extra: { api_key?: string } = {}): ResourceRecord {
  const { id, login, email, first_name, last_name, status, time_zone, locale, created_at, updated_at, activated_at, suspend_at, deleted_at, password_changed_at } = user;
  return {
    id, login, email, first_name, last_name, status, time_zone, locale, created_at, updated_at, activated_at, suspend_at, deleted_at, password_changed_at,
    roles: user.roles,
    bucket_id: user.bucket_id,
    user_group_id: user.user_group_id,
    totp_enabled: user.totp_enabled,
    registered_yubikey: user.registered_yubikey,
    ...extra,
  };
}
