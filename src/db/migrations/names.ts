/**
 * Every migration's name, in the order they apply: the keys of allMigrations (index.ts), kept here
 * apart so that a start finds nothing pending by comparing these with what the database applied,
 * without loading the migrations themselves (db/database.ts migrateToLatest). A new migration goes
 * into both lists; test/concurrent-migrations.test.ts checks that they agree.
 */
export const MIGRATION_NAMES: readonly string[] = [
  '001_initial', '002_sessions_and_lockout', '003_change_notifications', '004_row_blocks', '005_login_addresses', '006_error_tracker',
  '007_error_counts', '008_error_search', '009_error_search_postgres', '010_webhook_deliveries', '011_tracker_change_notifications',
  '012_notify_table_schema', '013_login_lower_index', '014_wide_counters', '015_credential_changes', '016_roles', '017_billing_buckets',
  '018_user_buckets', '019_role_credential_changes', '020_user_groups', '021_user_api_keys', '022_ingest_keys', '023_error_triage',
  '024_audit_log', '025_alert_routing', '026_statement_error_counts', '027_error_list_indexes', '028_error_pair_counts',
  '029_alert_rule_changes', '030_users_data_changes', '031_triage_counts', '032_bulk_update_costs',
  '033_two_factor', '034_password_policy', '035_user_white_lists', '036_last_access_log', '037_role_requires_two_factor', '038_identity_providers', '039_ingest_key_kinds',
  '040_log_sources', '041_log_rules', '043_error_search_backtrace', '047_releases', '048_changes', '049_saved_searches',
];
