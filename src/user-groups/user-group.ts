import type { HeldRoles } from '../roles/role.js';

/** A user group as cmi keeps and serves it (wire names, docs/api.md#user-groups). */
export interface UserGroup {
  id: number;
  label: string;
  identifier: string;
  /** The roles it holds, with their permissions: they apply to its members (docs/security.md#user-groups). */
  roles: HeldRoles['roles'];
  /** The billing bucket its members are meant for, or null (docs/api.md#billing-buckets). */
  bucket_id: number | null;
  created_at: Date;
  updated_at: Date;
}

/** What a group's create and edit set; `role_ids` replace the group's roles. */
export interface UserGroupFields {
  label: string;
  identifier: string;
  role_ids: number[];
  bucket_id: number | null;
}
