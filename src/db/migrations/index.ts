import type { Migration } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { initialMigration } from './001_initial.js';
import { sessionsAndLockoutMigration } from './002_sessions_and_lockout.js';
import { changeNotificationsMigration } from './003_change_notifications.js';
import { rowBlocksMigration } from './004_row_blocks.js';
import { loginAddressesMigration } from './005_login_addresses.js';
import { errorTrackerMigration } from './006_error_tracker.js';
import { errorCountsMigration } from './007_error_counts.js';
import { errorSearchMigration } from './008_error_search.js';
import { errorSearchPostgresMigration } from './009_error_search_postgres.js';
import { webhookDeliveriesMigration } from './010_webhook_deliveries.js';
import { trackerChangeNotificationsMigration } from './011_tracker_change_notifications.js';
import { notifyTableSchemaMigration } from './012_notify_table_schema.js';
import { loginLowerIndexMigration } from './013_login_lower_index.js';
import { wideCountersMigration } from './014_wide_counters.js';
import { credentialChangesMigration } from './015_credential_changes.js';
import { rolesMigration } from './016_roles.js';
import { billingBucketsMigration } from './017_billing_buckets.js';
import { userBucketsMigration } from './018_user_buckets.js';
import { roleCredentialChangesMigration } from './019_role_credential_changes.js';
import { userGroupsMigration } from './020_user_groups.js';
import { userApiKeysMigration } from './021_user_api_keys.js';
import { ingestKeysMigration } from './022_ingest_keys.js';
import { errorTriageMigration } from './023_error_triage.js';
import { auditLogMigration } from './024_audit_log.js';
import { alertRoutingMigration } from './025_alert_routing.js';
import { statementErrorCountsMigration } from './026_statement_error_counts.js';
import { errorListIndexesMigration } from './027_error_list_indexes.js';
import { errorPairCountsMigration } from './028_error_pair_counts.js';
import { alertRuleChangesMigration } from './029_alert_rule_changes.js';
import { usersDataChangesMigration } from './030_users_data_changes.js';
import { triageCountsMigration } from './031_triage_counts.js';
import { bulkUpdateCostsMigration } from './032_bulk_update_costs.js';
import { twoFactorMigration } from './033_two_factor.js';
import { passwordPolicyMigration } from './034_password_policy.js';
import { userWhiteListsMigration } from './035_user_white_lists.js';
import { lastAccessLogMigration } from './036_last_access_log.js';
import { roleRequiresTwoFactorMigration } from './037_role_requires_two_factor.js';
import { identityProvidersMigration } from './038_identity_providers.js';
import { ingestKeyKindsMigration } from './039_ingest_key_kinds.js';
import { logSourcesMigration } from './040_log_sources.js';
import { logRulesMigration } from './041_log_rules.js';
import { errorSearchBacktraceMigration } from './043_error_search_backtrace.js';
import { releasesMigration } from './047_releases.js';
import { changesMigration } from './048_changes.js';
import { savedSearchesMigration } from './049_saved_searches.js';

/** Every migration, in order. Names are permanent: never rename or edit a shipped one, add a new one. */
export function allMigrations(dialect: Dialect): Record<string, Migration> {
  return {
    '001_initial': initialMigration(dialect),
    '002_sessions_and_lockout': sessionsAndLockoutMigration,
    '003_change_notifications': changeNotificationsMigration(dialect),
    '004_row_blocks': rowBlocksMigration(dialect),
    '005_login_addresses': loginAddressesMigration,
    '006_error_tracker': errorTrackerMigration(dialect),
    '007_error_counts': errorCountsMigration(dialect),
    '008_error_search': errorSearchMigration(dialect),
    '009_error_search_postgres': errorSearchPostgresMigration(dialect),
    '010_webhook_deliveries': webhookDeliveriesMigration(dialect),
    '011_tracker_change_notifications': trackerChangeNotificationsMigration(dialect),
    '012_notify_table_schema': notifyTableSchemaMigration(dialect),
    '013_login_lower_index': loginLowerIndexMigration,
    '014_wide_counters': wideCountersMigration(dialect),
    '015_credential_changes': credentialChangesMigration(dialect),
    '016_roles': rolesMigration(dialect),
    '017_billing_buckets': billingBucketsMigration(dialect),
    '018_user_buckets': userBucketsMigration,
    '019_role_credential_changes': roleCredentialChangesMigration(dialect),
    '020_user_groups': userGroupsMigration(dialect),
    '021_user_api_keys': userApiKeysMigration(dialect),
    '022_ingest_keys': ingestKeysMigration(dialect),
    '023_error_triage': errorTriageMigration(dialect),
    '024_audit_log': auditLogMigration(dialect),
    '025_alert_routing': alertRoutingMigration(dialect),
    '026_statement_error_counts': statementErrorCountsMigration(dialect),
    '027_error_list_indexes': errorListIndexesMigration(dialect),
    '028_error_pair_counts': errorPairCountsMigration(dialect),
    '029_alert_rule_changes': alertRuleChangesMigration(dialect),
    '030_users_data_changes': usersDataChangesMigration(dialect),
    '031_triage_counts': triageCountsMigration(dialect),
    '032_bulk_update_costs': bulkUpdateCostsMigration(dialect),
    '033_two_factor': twoFactorMigration(dialect),
    '034_password_policy': passwordPolicyMigration(dialect),
    '035_user_white_lists': userWhiteListsMigration(dialect),
    '036_last_access_log': lastAccessLogMigration(dialect),
    '037_role_requires_two_factor': roleRequiresTwoFactorMigration,
    '038_identity_providers': identityProvidersMigration(dialect),
    '039_ingest_key_kinds': ingestKeyKindsMigration,
    '040_log_sources': logSourcesMigration(dialect),
    '041_log_rules': logRulesMigration(dialect),
    '043_error_search_backtrace': errorSearchBacktraceMigration(dialect),
    '047_releases': releasesMigration(dialect),
    '048_changes': changesMigration(dialect),
    '049_saved_searches': savedSearchesMigration(dialect),
  };
}
