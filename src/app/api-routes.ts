import { ALERTS_ROUTES } from '../alerts/deliveries.routes.js';
import { ALERT_ROUTING_ROUTES } from '../alerts/alert-routing.routes.js';
import { HEALTH_ROUTES } from '../health/health.routes.js';
import type { RouteSpec } from '../http/route-spec.js';
import { TRACKER_ROUTES } from '../tracker/tracker.routes.js';
import { TRIAGE_ROUTES } from '../tracker/triage.routes.js';
import { RELEASES_ROUTES } from '../tracker/releases.routes.js';
import { SAVED_SEARCHES_ROUTES } from '../tracker/saved-searches.routes.js';
import { SESSION_ROUTES } from '../users/session.routes.js';
import { USERS_ROUTES } from '../users/users.routes.js';
import { USER_API_KEYS_ROUTES } from '../users/user-api-keys.routes.js';
import { USER_WHITE_LISTS_ROUTES } from '../users/user-white-lists.routes.js';
import { TWO_FACTOR_ROUTES } from '../users/two-factor.routes.js';
import { YUBI_KEYS_ROUTES } from '../users/yubi-keys.routes.js';
import { PASSWORD_POLICY_ROUTES } from '../users/password-policy.routes.js';
import { ACCOUNT_SECURITY_ROUTES } from '../users/account-security.routes.js';
import { SIGN_IN_FORM_ROUTES } from '../users/sign-in-form.routes.js';
import { ROLES_ROUTES } from '../roles/roles.routes.js';
import { BUCKETS_ROUTES } from '../buckets/buckets.routes.js';
import { USER_GROUPS_ROUTES } from '../user-groups/user-groups.routes.js';
import { VERSION_ROUTES } from '../version/version.routes.js';
import { INGEST_KEYS_ROUTES } from '../ingest/ingest-keys.routes.js';
import { SENTRY_ROUTES } from '../ingest/sentry.routes.js';
import { AUDIT_ROUTES } from '../audit/audit.routes.js';
import { IDENTITY_PROVIDERS_ROUTES } from '../identity/identity-providers.routes.js';
import { JOURNAL_ROUTES } from '../logs/journal-upload.routes.js';
import { LOG_RULES_ROUTES } from '../logs/log-rules.routes.js';
import { OTLP_ROUTES } from '../logs/otlp.routes.js';
import { LOG_SOURCES_ROUTES } from '../logs/log-sources.routes.js';
import { CHANGES_ROUTES } from '../changes/changes.routes.js';

/**
 * The API's routes, each feature's rows in the order of the OpenAPI document (docs/api.md#openapi).
 * Routes that a setting turns on are declared by their features: openapi/openapi.routes.ts
 * OPENAPI_ROUTES, metrics/metrics.routes.ts METRICS_ROUTE.
 */
export const ROUTES: readonly RouteSpec[] = [
  ...VERSION_ROUTES,
  ...USERS_ROUTES,
  ...USER_API_KEYS_ROUTES,
  ...USER_WHITE_LISTS_ROUTES,
  ...TWO_FACTOR_ROUTES,
  ...YUBI_KEYS_ROUTES,
  ...PASSWORD_POLICY_ROUTES,
  ...ACCOUNT_SECURITY_ROUTES,
  ...ROLES_ROUTES,
  ...BUCKETS_ROUTES,
  ...USER_GROUPS_ROUTES,
  ...SESSION_ROUTES,
  ...SIGN_IN_FORM_ROUTES,
  ...TRACKER_ROUTES,
  ...TRIAGE_ROUTES,
  ...RELEASES_ROUTES,
  ...SAVED_SEARCHES_ROUTES,
  ...ALERTS_ROUTES,
  ...ALERT_ROUTING_ROUTES,
  ...INGEST_KEYS_ROUTES,
  ...SENTRY_ROUTES,
  ...OTLP_ROUTES,
  ...JOURNAL_ROUTES,
  ...LOG_SOURCES_ROUTES,
  ...LOG_RULES_ROUTES,
  ...IDENTITY_PROVIDERS_ROUTES,
  ...CHANGES_ROUTES,
  ...AUDIT_ROUTES,
  ...HEALTH_ROUTES,
];
