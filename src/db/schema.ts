import type { Generated } from 'kysely';

/**
 * Table shapes as the database holds them. Timestamps are ISO-8601 UTC text with milliseconds
 * (`2026-11-20T10:00:00.123Z`) and flags are 0/1 integers, so both SQLite and PostgreSQL store and
 * sort them the same way and one mapping serves both.
 */
export interface UsersTable {
  id: Generated<number>;
  login: string;
  email: string;
  password_hash: string;
  first_name: string;
  last_name: string;
  status: string;
  /** 'admin' while the user holds role 1, else 'user': kept by migration 016's triggers (cmi inserts 'user' and adds the roles). */
  role: string;
  time_zone: string | null;
  locale: string | null;
  api_key_hash: string | null;
  session_epoch: Generated<number>;
  created_at: string;
  updated_at: string;
  activated_at: string | null;
  suspend_at: string | null;
  deleted_at: string | null;
  password_changed_at: string | null;
  /** The billing bucket it belongs to, or null (migration 018). */
  bucket_id: Generated<number | null>;
  /** The user group it belongs to, or null (migration 020). */
  user_group_id: Generated<number | null>;
  /** 1 while the user has a confirmed second factor (migration 033: kept with user_two_factor). */
  totp_enabled: Generated<number>;
  /** 1 while the user has a YubiKey recorded (migration 033: kept with user_yubi_keys). */
  registered_yubikey: Generated<number>;
}

export interface InfrastructureErrorsTable {
  id: Generated<number>;
  fingerprint: string;
  error_class: string;
  message: string;
  backtrace: string;
  counter: number;
  reported: number;
  created_at: string;
  updated_at: string;
}

/** An error's triage, one row per error, kept by triggers (migration 023; tracker/triage.ts). */
export interface ErrorTriageTable {
  error_id: number;
  triage_status: 'unresolved' | 'resolved' | 'ignored' | 'snoozed';
  assignee_id: number | null;
  snoozed_until: string | null;
  snooze_occurrences: number | null;
  /** The counter at which a snooze by occurrences ends. */
  snooze_until_counter: number | null;
  resolved_at: string | null;
  resolved_by_id: number | null;
  regressed_at: string | null;
  /** Resolved in this release (or in the next one after it): only a later release's occurrence regresses it (migration 047). */
  resolved_in_release: string | null;
  updated_at: string;
}

/** Notes on an error (migration 023). */
export interface ErrorNotesTable {
  id: Generated<number>;
  error_id: number;
  author_id: number | null;
  body: string;
  created_at: string;
}

/** What happened to an error, oldest first by id (migration 023); details: a JSON object as text. */
export interface ErrorActivityTable {
  id: Generated<number>;
  error_id: number;
  at: string;
  actor_id: number | null;
  action: string;
  details: string;
}

/** The kept sample of an error's occurrences (migration 006). */
export interface ErrorOccurrencesTable {
  id: Generated<number>;
  error_id: number;
  /** The error's counter once this occurrence was counted. */
  ordinal: number;
  occurred_at: string;
  /** Occurrences this row stands for (a reporter may pre-aggregate). */
  count: number;
  host: string | null;
  component: string | null;
  request_id: string | null;
  message: string;
  /** A JSON object, as text. */
  context: string | null;
}

/** Occurrences per error per hour (`hour`: Unix seconds / 3600), exact (migration 006). */
export interface ErrorHistogramTable {
  error_id: number;
  hour: number;
  count: number;
}

/** Every release seen in an occurrence or declared (migration 047, docs/search.md#releases). */
export interface ReleasesTable {
  name: string;
  /** The first occurrence that carried it, across the errors; null while only declared. */
  first_seen_at: string | null;
  declared_at: string | null;
  /** Errors whose first occurrence carried it. */
  errors_new: Generated<number>;
  /** Resolved errors an occurrence of it reopened. */
  regressions: Generated<number>;
}

/** Occurrences per error per host or component, exact; '' is "not given" (migration 006). */
export interface ErrorBreakdownTable {
  error_id: number;
  /** `host`, `component` (a row of '' for reports without one), or a report's facets: `release`, `environment`, `level`, `tag.<name>`. */
  dimension: string;
  value: string;
  count: number;
  /** Null on rows written before migration 047. */
  first_seen_at: string | null;
  last_seen_at: string;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface RevokedSessionsTable {
  session_id: string;
  expires_at: string;
}

/** Migration 002's failed-login counters, used by older versions of cmi only (migration 005). */
export interface LoginFailuresTable {
  /** `user:<id>`, `login:<unknown login, lower case>` or `address:<ip>`. */
  key: string;
  failures: number;
  window_started_at: string;
}

/**
 * Failed logins in one window (migration 005): for an account name (as typed, lower case) from an
 * address; for the address across names (`account` ''); for the name across addresses (`address` '').
 */
export interface FailedLoginsTable {
  account: string;
  address: string;
  failures: number;
  window_started_at: string;
}

/** Addresses each user has logged in from, the latest few (migration 005). */
export interface LoginAddressesTable {
  user_id: number;
  address: string;
  last_success_at: string;
}

/** Live rows per block of `block_size` ids (1,024 or 32,768), kept by triggers (migration 004). */
export interface RowBlocksTable {
  table_name: string;
  block_size: number;
  block: number;
  row_count: number;
}

/** Errors in all, per reported, per class, per host and component seen, kept by triggers (migration 007). */
export interface ErrorCountsTable {
  dimension: ErrorCountDimension;
  value: string;
  errors: number;
}

/** The outbox of reports and alerts (migration 010, docs/reporting-and-alerts.md). */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  /** The X-Cmi-Delivery header: the same on every try. */
  delivery_id: string;
  /** `test`: a destination's test (migration 025), error_id 0; `silent`, `back`: a log source's (migration 040), error_id minus the source's id. */
  kind: 'report' | 'new' | 'spike' | 'regression' | 'test' | 'silent' | 'back';
  error_id: number;
  url: string;
  /** The JSON body, exactly as sent on every try. */
  body: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  /** The receiver's last HTTP status; null when none answered (refused, timed out). */
  last_status: number | null;
  created_at: string;
  next_attempt_at: string;
  delivered_at: string | null;
  /** The claim of the process sending it now, and until when it holds (migration 010). */
  lease_owner: string | null;
  lease_until: string | null;
  /** The destination it goes to (migration 025); null: the built-in one of CMI_ALERT_WEBHOOK_URL, or a report. */
  destination_id: number | null;
  /** Why the last try failed, in a few words (migration 025). */
  last_error: string | null;
  /** The id of the message that carried it: its own delivery_id, or a digest's (migration 025). */
  sent_as: string | null;
}

/** Where alerts go (migration 025, docs/alert-routing.md): secrets are written, never served. */
export interface AlertDestinationsTable {
  id: Generated<number>;
  label: string;
  kind: 'webhook' | 'slack' | 'email';
  url: string | null;
  secret: string | null;
  smtp_host: string | null;
  smtp_port: number | null;
  smtp_security: 'none' | 'starttls' | 'tls' | null;
  smtp_user: string | null;
  smtp_password: string | null;
  from_address: string | null;
  /** The recipients, separated by commas. */
  to_addresses: string | null;
  enabled: number;
  created_at: string;
  updated_at: string;
}

/** Which events of which errors go where (migration 025). */
export interface AlertRulesTable {
  id: Generated<number>;
  label: string;
  /** The events, separated by spaces: new, regression, spike, report. */
  events: string;
  component: string | null;
  host: string | null;
  error_class: string | null;
  error_class_prefix: string | null;
  spike_threshold: number | null;
  spike_window: number | null;
  cooldown: number | null;
  /** Silent and back alerts for the sources in the rule's scope after this many minutes (migration 040); null: none. */
  silent_minutes: number | null;
  enabled: number;
  created_at: string;
  updated_at: string;
}

export interface AlertRuleDestinationsTable {
  rule_id: number;
  destination_id: number;
}

/** Per rule and error: the spike window and the last spike alert (migration 025). */
export interface AlertRuleWindowsTable {
  rule_id: number;
  error_id: number;
  window_started_at: string;
  window_count: number;
  spike_alerted_at: string | null;
}

/** Per error: the spike window and the last spike alert (migration 010). */
export interface ErrorAlertsTable {
  error_id: number;
  window_started_at: string;
  window_count: number;
  spike_alerted_at: string | null;
}

/** Receivers that answered 410 Gone (migration 010). */
export interface WebhookGoneUrlsTable {
  url: string;
  gone_at: string;
}

/** A pair of filters: `error_class`, `host` or `component` with `reported` ('0' or '1'), its value the class, host or component (migration 028). */
export type ErrorPairDimension = `${'error_class' | 'host' | 'component'}.${'0' | '1'}`;
/** The triage's counts: `triage.<status>`, value the assignee's id or '' (migration 031). */
export type TriageCountDimension = `triage.${string}`;
export type ErrorCountDimension = 'all' | 'reported' | 'error_class' | 'host' | 'component' | ErrorPairDimension | TriageCountDimension;

export interface Schema {
  users: UsersTable;
  infrastructure_errors: InfrastructureErrorsTable;
  settings: SettingsTable;
  revoked_sessions: RevokedSessionsTable;
  login_failures: LoginFailuresTable;
  failed_logins: FailedLoginsTable;
  login_addresses: LoginAddressesTable;
  row_blocks: RowBlocksTable;
  error_occurrences: ErrorOccurrencesTable;
  error_histogram: ErrorHistogramTable;
  error_breakdown: ErrorBreakdownTable;
  releases: ReleasesTable;
  error_counts: ErrorCountsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  error_alerts: ErrorAlertsTable;
  webhook_gone_urls: WebhookGoneUrlsTable;
  alert_destinations: AlertDestinationsTable;
  alert_rules: AlertRulesTable;
  alert_rule_destinations: AlertRuleDestinationsTable;
  alert_rule_windows: AlertRuleWindowsTable;
  permissions: PermissionsTable;
  roles: RolesTable;
  role_permissions: RolePermissionsTable;
  user_roles: UserRolesTable;
  billing_buckets: BillingBucketsTable;
  error_triage: ErrorTriageTable;
  error_notes: ErrorNotesTable;
  error_activity: ErrorActivityTable;
  user_groups: UserGroupsTable;
  user_group_roles: UserGroupRolesTable;
  user_api_keys: UserApiKeysTable;
  user_white_lists: UserWhiteListsTable;
  user_two_factor: UserTwoFactorTable;
  user_recovery_codes: UserRecoveryCodesTable;
  user_yubi_keys: UserYubiKeysTable;
  ingest_keys: IngestKeysTable;
  ingest_key_usage: IngestKeyUsageTable;
  ingested_events: IngestedEventsTable;
  audit_events: AuditEventsTable;
  password_history: PasswordHistoryTable;
  last_access_log: LastAccessLogTable;
  account_unlock_tokens: AccountUnlockTokensTable;
  identity_providers: IdentityProvidersTable;
  user_identities: UserIdentitiesTable;
  sso_attempts: SsoAttemptsTable;
  log_sources: LogSourcesTable;
  log_source_silences: LogSourceSilencesTable;
  log_rules: LogRulesTable;
  saved_searches: SavedSearchesTable;
  changes: ChangesTable;
}

/** OpenID Connect, SAML and LDAP providers (migration 038): `settings` and `mappings` are JSON text; `enabled`, `jit_provisioning` 0 or 1. */
export interface IdentityProvidersTable {
  id: Generated<number>;
  kind: string;
  label: string;
  enabled: number;
  settings: string;
  mappings: string;
  jit_provisioning: number;
  created_at: string;
  updated_at: string;
}

/** Which person at which provider is which account (migration 038). */
export interface UserIdentitiesTable {
  id: Generated<number>;
  provider_id: number;
  user_id: number;
  subject: string;
  created_at: string;
  last_sign_in_at: string;
}

/** A browser's sign-in while it is at the provider (migration 038): single use, short-lived. */
export interface SsoAttemptsTable {
  id: string;
  provider_id: number;
  browser_key_hash: string;
  /** JSON text: what the protocol must find again (OIDC's state, nonce and PKCE verifier; SAML's request id). */
  protocol: string;
  next: string;
  address: string;
  /** Set once the provider's answer named an account (SAML's return, before the browser's own step). */
  user_id: number | null;
  expires_at: string;
}

/** Each user's earlier password hashes (migration 034), for the password policy's history rule: never served. */
export interface PasswordHistoryTable {
  id: Generated<number>;
  user_id: number;
  password_hash: string;
  created_at: string;
}

/** Sign-ins and refused sign-ins of known users, the latest few per user (migration 036; users/last-access-log.ts). */
export interface LastAccessLogTable {
  id: Generated<number>;
  user_id: number;
  ip: string;
  /** `password`, `api_key` or `console`. */
  credential: string;
  user_agent: string | null;
  /** 1 for a sign-in, 0 for a refused one. */
  success: number;
  created_at: string;
}

/** The unlock token mailed when an account locks (migration 036): its SHA-256, never the token. */
export interface AccountUnlockTokensTable {
  user_id: number;
  token_hash: string;
  expires_at: string;
  created_at: string;
}

/** A user's API keys (migration 021): the SHA-256 of each, never the key. */
export interface UserApiKeysTable {
  id: Generated<number>;
  user_id: number;
  description: string;
  key_hash: string;
  /** 1 for the key `make_new_api_key` makes anew (at most one per user), else 0. */
  is_default: Generated<number>;
  created_at: string;
  last_used_at: string | null;
}

/** A user's allowed addresses (migration 035; docs/security.md#allowed-addresses). */
export interface UserWhiteListsTable {
  id: Generated<number>;
  user_id: number;
  /** An address or CIDR range in its normal form (shared/ip-ranges.ts). */
  ip: string;
  description: string;
  created_at: string;
  updated_at: string;
}

/** A user's TOTP second factor (migration 033): pending until confirmed_at (docs/security.md#second-factor). */
export interface UserTwoFactorTable {
  user_id: number;
  /** The shared secret in base32, as the enrolment answered it. */
  secret: string;
  created_at: string;
  confirmed_at: string | null;
  /** The last time step whose code was accepted: no code of it or before is accepted again. */
  last_step: number | string | null;
}

/** A user's single-use recovery codes (migration 033): the SHA-256 of each, never the code. */
export interface UserRecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  used_at: string | null;
}

/** A user's YubiKeys as OnApp lists them (migration 033): the key's public id (its OTPs' first 12 modhex characters), never an OTP. */
export interface UserYubiKeysTable {
  id: Generated<number>;
  user_id: number;
  label: string;
  key_id: string;
  created_at: string;
  updated_at: string;
  last_used: string | null;
}

/** The permission catalogue (migration 016; roles/permissions.ts). */
export interface PermissionsTable {
  id: number;
  identifier: string;
  label: string;
  created_at: string;
  updated_at: string;
}

export interface RolesTable {
  id: Generated<number>;
  label: string;
  identifier: string;
  /** 1 for the system roles admin (id 1) and user (id 2). */
  system: Generated<number>;
  /** 1 when its holders must have a second factor (migration 037; docs/security.md#second-factor). */
  requires_two_factor: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface RolePermissionsTable {
  role_id: number;
  permission_id: number;
}

export interface UserRolesTable {
  user_id: number;
  role_id: number;
}

/** OnApp's billing buckets, kept as given (migration 017). */
export interface BillingBucketsTable {
  id: Generated<number>;
  label: string;
  currency_code: string;
  monthly_price: number;
  show_price: number;
  allows_kms: number;
  allows_mak: number;
  allows_own: number;
  created_at: string;
  updated_at: string;
}

/** OnApp's user groups (migration 020). */
export interface UserGroupsTable {
  id: Generated<number>;
  label: string;
  identifier: string;
  bucket_id: number | null;
  created_at: string;
  updated_at: string;
}

/** The roles each user group holds, which apply to its members (migration 020). */
export interface UserGroupRolesTable {
  user_group_id: number;
  role_id: number;
}

/** Write-only keys of the Sentry ingestion endpoints (migration 022); `enabled` 0/1. */
export interface IngestKeysTable {
  id: Generated<number>;
  label: string;
  component: string | null;
  public_key: string;
  enabled: number;
  rate_limit_per_minute: number;
  allowed_origins: string;
  /** `sentry`, `otlp`, `journald` or `syslog` (migration 039). */
  kind: Generated<string>;
  allowed_networks: Generated<string>;
  client_certificate_sha256: string | null;
  min_severity: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** What each ingest key's use writes, apart from the key so it signals no credential change (migration 022). */
export interface IngestKeyUsageTable {
  key_id: number;
  last_used_at: string | null;
  dropped: Generated<number | string>;
}

/** The event keys counted lately (tracker/infrastructure-error.ts ErrorReport.event_key; migration 022). */
export interface IngestedEventsTable {
  event_key: string;
  occurred_at: string;
}

/** The audit trail (migration 024): one row a change; `changes` a JSON object as text, never a secret. */
export interface AuditEventsTable {
  id: Generated<number>;
  at: string;
  actor_id: number | null;
  actor_login: string;
  credential: string;
  address: string | null;
  request_id: string | null;
  action: string;
  target_type: string;
  target_id: number | null;
  changes: string;
}

/** Every (host, program) pair that has sent a log record (migration 040, docs/log-sources.md#sources-and-silence). */
export interface LogSourcesTable {
  id: Generated<number>;
  host: string;
  /** '' when the records named no program. */
  program: string;
  component: string | null;
  /** The ingest key of its latest batch (no foreign key: a revoked key's sources stay). */
  key_id: number | null;
  first_seen_at: string;
  last_seen_at: string;
  lines: number | string;
  errors: number | string;
}

/** A silence claimed per rule and source (migration 040): `last_seen_at` as it was when `silent` was queued. */
export interface LogSourceSilencesTable {
  rule_id: number;
  source_id: number;
  last_seen_at: string;
  silent_at: string;
}

/** Operator rules for the log sources (migration 041, docs/log-sources.md#operator-rules): `enabled` 0 or 1. */
export interface LogRulesTable {
  id: Generated<number>;
  position: number;
  label: string;
  /** A glob the record's program must match; null: any program. */
  program: string | null;
  /** A glob the record's message must match. */
  pattern: string;
  error_class: string;
  component: string | null;
  enabled: number;
  created_at: string;
  updated_at: string;
}

/** A change to the cloud (migration 048, docs/changes.md). */
export interface ChangesTable {
  id: Generated<number>;
  kind: string;
  title: string;
  release: string | null;
  started_at: string;
  /** Null while the change runs. */
  ended_at: string | null;
  /** JSON lists of strings; the empty list means every host (component). */
  hosts: string;
  components: string;
  /** The id of the user who recorded it; null when no user did. */
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

/** Saved searches (migration 049, docs/search.md#saved-searches): `shared` 0 or 1. */
export interface SavedSearchesTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  query: string;
  shared: number;
  created_at: string;
  updated_at: string;
}
