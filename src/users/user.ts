import type { HeldRoles } from '../roles/role.js';

/**
 * A user account as cmi keeps and serves it. Keys carry their wire names (snake_case), the same in the
 * database, the JSON and the XML, so no layer renames them.
 */
/** 'admin' while the user holds the system role admin (id 1), else 'user' (cmi's own field, docs/api.md#users). */
export type Role = 'admin' | 'user';
export type UserStatus = 'active' | 'suspended' | 'deleted';

export interface User {
  id: number;
  login: string;
  email: string;
  first_name: string;
  last_name: string;
  status: UserStatus;
  role: Role;
  time_zone: string | null;
  locale: string | null;
  created_at: Date;
  updated_at: Date;
  activated_at: Date | null;
  suspend_at: Date | null;
  deleted_at: Date | null;
  password_changed_at: Date | null;
  /** The billing bucket it belongs to, or null (docs/api.md#billing-buckets). */
  bucket_id: number | null;
  /** The user group it belongs to, or null (docs/api.md#user-groups); its roles' permissions are the user's too. */
  user_group_id: number | null;
  /** Whether it has a confirmed second factor (docs/security.md#second-factor): Basic with its password is refused. */
  totp_enabled: boolean;
  /**
   * Whether one of its roles, its own or its group's, requires a second factor (never rendered): without
   * totp_enabled it may sign in only to enrol (docs/security.md#second-factor).
   */
  two_factor_required: boolean;
  /** Whether it has a YubiKey recorded (docs/security.md#yubikeys; never a factor in cmi). */
  registered_yubikey: boolean;
  /** The roles the user holds, with their permissions. */
  roles: HeldRoles['roles'];
  /** The union of its roles' and its group's roles' permissions (never rendered): the user as an Actor (roles/authorization.ts). */
  permissions: ReadonlySet<string>;
}

/** What authentication needs besides the public record; never rendered. */
export interface UserCredentials {
  user: User;
  password_hash: string;
  /** The id of the user's API key whose hash is the one looked up with it (users.store.ts findCredentials), else null. */
  api_key_id: number | null;
  session_epoch: number;
}
