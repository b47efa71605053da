/** A permission of the catalogue as cmi keeps and serves it (wire names, docs/api.md#permissions). */
export interface PermissionRecord {
  id: number;
  identifier: string;
  label: string;
  created_at: Date;
  updated_at: Date;
}

/** A role with its permissions (docs/api.md#roles). */
export interface Role {
  id: number;
  label: string;
  identifier: string;
  system: boolean;
  /** Whether its holders must have a second factor (docs/security.md#second-factor). */
  requires_two_factor: boolean;
  users_count: number;
  created_at: Date;
  updated_at: Date;
  permissions: PermissionRecord[];
}

/** The roles a user holds, and the union of their permissions' identifiers. */
export interface HeldRoles {
  roles: Array<Omit<Role, 'users_count'>>;
  permissions: ReadonlySet<string>;
}
