/**
 * What a backup holds (docs/operations.md#backup-and-restore): every table cmi keeps data in, in an
 * order in which each table comes after the tables it refers to, each with its primary key (the backup
 * reads it in key order, a page at a time). Restoring inserts them in this order and the database's
 * triggers rebuild the tables that are derived from them.
 *
 * test/backup-restore.test.ts fails when a migration adds a table that is in neither list, so a new
 * table is never silently left out of backups.
 */
export const BACKED_UP_TABLES: ReadonlyArray<{ table: string; key: readonly string[] }> = [
  { table: 'settings', key: ['key'] },
  { table: 'permissions', key: ['id'] },
  { table: 'roles', key: ['id'] },
  { table: 'role_permissions', key: ['role_id', 'permission_id'] },
  { table: 'billing_buckets', key: ['id'] },
  { table: 'user_groups', key: ['id'] },
  { table: 'user_group_roles', key: ['user_group_id', 'role_id'] },
  { table: 'users', key: ['id'] },
  { table: 'user_roles', key: ['user_id', 'role_id'] },
  { table: 'user_api_keys', key: ['id'] },
  { table: 'user_white_lists', key: ['id'] },
  { table: 'user_two_factor', key: ['user_id'] },
  { table: 'user_recovery_codes', key: ['id'] },
  { table: 'user_yubi_keys', key: ['id'] },
  { table: 'password_history', key: ['id'] },
  { table: 'identity_providers', key: ['id'] },
  { table: 'user_identities', key: ['id'] },
  { table: 'login_addresses', key: ['user_id', 'address'] },
  { table: 'revoked_sessions', key: ['session_id'] },
  { table: 'login_failures', key: ['key'] },
  { table: 'failed_logins', key: ['account', 'address'] },
  // Before the errors: each restored error's triage row is there when migration 023's trigger would add one.
  { table: 'error_triage', key: ['error_id'] },
  { table: 'infrastructure_errors', key: ['id'] },
  { table: 'error_notes', key: ['id'] },
  { table: 'error_activity', key: ['id'] },
  { table: 'error_occurrences', key: ['id'] },
  { table: 'error_histogram', key: ['error_id', 'hour'] },
  { table: 'error_breakdown', key: ['error_id', 'dimension', 'value'] },
  { table: 'releases', key: ['name'] },
  { table: 'error_alerts', key: ['error_id'] },
  { table: 'alert_destinations', key: ['id'] },
  { table: 'alert_rules', key: ['id'] },
  { table: 'alert_rule_destinations', key: ['rule_id', 'destination_id'] },
  { table: 'alert_rule_windows', key: ['rule_id', 'error_id'] },
  { table: 'webhook_deliveries', key: ['id'] },
  { table: 'webhook_gone_urls', key: ['url'] },
  { table: 'ingest_keys', key: ['id'] },
  { table: 'ingest_key_usage', key: ['key_id'] },
  { table: 'ingested_events', key: ['event_key'] },
  { table: 'audit_events', key: ['id'] },
  { table: 'last_access_log', key: ['id'] },
  { table: 'account_unlock_tokens', key: ['user_id'] },
  { table: 'log_sources', key: ['id'] },
  { table: 'log_rules', key: ['id'] },
  { table: 'log_source_silences', key: ['rule_id', 'source_id'] },
  { table: 'changes', key: ['id'] },
  { table: 'saved_searches', key: ['id'] },
];

/**
 * Tables a backup leaves out: the migrations' own bookkeeping, and what triggers derive from the tables
 * above (counts, row blocks, the search index, change signals), which restoring rebuilds,
 * `error_bulk_delete`, which holds a row only inside a bulk delete's transaction (migration 026), and
 * `sso_attempts`, sign-ins in flight at an identity provider for ten minutes at most (migration 038):
 * a restored one could only be finished by a browser that is long gone.
 */
export const DERIVED_TABLES: ReadonlySet<string> = new Set([
  'kysely_migration', 'kysely_migration_lock', 'sqlite_sequence',
  'row_blocks', 'error_counts', 'credential_changes', 'data_changes', 'error_bulk_delete', 'sso_attempts',
  'error_search', 'error_search_data', 'error_search_idx', 'error_search_docsize', 'error_search_config', 'error_search_content',
]);
