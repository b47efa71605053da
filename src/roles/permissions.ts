/**
 * The permission catalogue (docs/security.md#authorisation-by-permission): one OnApp-style dotted
 * identifier for every action cmi has, with its permanent id. Migration 016 stores this same list in
 * the `permissions` table; a later feature adds its own with a migration of its own and appends here.
 * `.own` permissions let a user act on its own account only; the plain one, on any.
 */
export const PERMISSIONS = [
  [1, 'users.read', 'See any user'],
  [2, 'users.read.own', 'See the own user'],
  [3, 'users.create', 'Create users'],
  [4, 'users.update', 'Edit any user, and the roles of users'],
  [5, 'users.update.own', 'Edit the own user'],
  [6, 'users.delete', 'Delete users'],
  [7, 'users.suspend', 'Suspend and activate users'],
  [8, 'users.api_key', 'Make a new API key for any user'],
  [9, 'users.api_key.own', 'Make a new API key for the own user'],
  [10, 'roles.read', 'See roles and permissions'],
  [11, 'roles.create', 'Create roles'],
  [12, 'roles.update', 'Edit roles'],
  [13, 'roles.delete', 'Delete roles'],
  [14, 'user_groups.read', 'See user groups'],
  [15, 'user_groups.create', 'Create user groups'],
  [16, 'user_groups.update', 'Edit user groups'],
  [17, 'user_groups.delete', 'Delete user groups'],
  [18, 'buckets.read', 'See billing buckets'],
  [19, 'buckets.create', 'Create billing buckets'],
  [20, 'buckets.update', 'Edit billing buckets'],
  [21, 'buckets.delete', 'Delete billing buckets'],
  [22, 'infrastructure_errors.read', 'See infrastructure errors, their occurrences, histograms and breakdowns'],
  [23, 'infrastructure_errors.create', 'Record infrastructure errors (what components report)'],
  [24, 'infrastructure_errors.report', 'Report an infrastructure error to the report webhook'],
  [25, 'infrastructure_errors.delete', 'Delete infrastructure errors'],
  [26, 'webhook_deliveries.read', 'See webhook deliveries'],
  [27, 'webhook_deliveries.retry', 'Send a failed webhook delivery again'],
  [28, 'ingest_keys.read', 'See ingest keys (Sentry DSNs)'],
  [29, 'ingest_keys.create', 'Create ingest keys'],
  [30, 'ingest_keys.update', 'Edit ingest keys'],
  [31, 'ingest_keys.delete', 'Revoke ingest keys'],
  [32, 'infrastructure_errors.triage', 'Triage infrastructure errors: status, snooze and assignee, one or in bulk'],
  [33, 'infrastructure_errors.notes', 'Write notes on infrastructure errors, and delete the own ones'],
  [34, 'infrastructure_errors.notes.delete', 'Delete anyone\'s notes on infrastructure errors'],
  [35, 'audit_log.read', 'Read the audit log'],
  [36, 'alert_destinations.read', 'See alert destinations (never their secrets) and their deliveries'],
  [37, 'alert_destinations.manage', 'Create, edit, test and delete alert destinations'],
  [38, 'alert_rules.read', 'See alert rules'],
  [39, 'alert_rules.manage', 'Create, edit and delete alert rules'],
  [40, 'password_policy.manage', 'See and change the password policy'],
  [41, 'identity_providers.read', 'See identity providers (never their secrets)'],
  [42, 'identity_providers.manage', 'Create, edit and delete identity providers'],
  [43, 'changes.read', 'See changes to the cloud and the changes suspected of causing an error'],
  [44, 'changes.manage', 'Record, edit and delete changes to the cloud'],
  [45, 'changes.create', 'Record changes (a CD pipeline\'s write-only key)'],
] as const;

export type Permission = (typeof PERMISSIONS)[number][1];

/** The system roles, present from the start (migration 016), never deleted, their identifiers fixed. */
export const ADMIN_ROLE_ID = 1;
export const USER_ROLE_ID = 2;

/** What the system role `user` holds: acting on its own account. */
export const OWN_PERMISSIONS: readonly Permission[] = ['users.read.own', 'users.update.own', 'users.api_key.own'];

export const ALL_PERMISSIONS: ReadonlySet<Permission> = new Set(PERMISSIONS.map(([, identifier]) => identifier));
