/**
 * `import { CmiClient } from 'cmi/client'`: a typed client of cmi's HTTP API, and of an OnApp control
 * panel for the endpoints they share (docs/client.md). It loads nothing of the server: only the resource
 * definitions (src/resources/) and fast-xml-parser for XML answers.
 */
import { versionResource } from '../version/version.resource.js';
import { auditLogApi } from './audit-log.js';
import { bucketsApi } from './buckets.js';
import { changesApi } from './changes.js';
import { passwordPolicyApi } from './password-policy.js';
import { deliveriesApi } from './deliveries.js';
import { infrastructureErrorsApi, releasesApi } from './infrastructure-errors.js';
import { savedSearchesApi } from './saved-searches.js';
import { identityProvidersApi } from './identity-providers.js';
import { ingestKeysApi } from './ingest-keys.js';
import { logSourcesApi } from './log-sources.js';
import { logRulesApi } from './log-rules.js';
import { alertDestinationsApi, alertRulesApi } from './alert-routing.js';
import { decodeRecord } from './records.js';
import { permissionsApi, rolesApi } from './roles.js';
import { type RequestOptions, transport, type TransportOptions } from './transport.js';
import { usersApi } from './users.js';
import { userGroupsApi } from './user-groups.js';

export type CmiClientOptions = TransportOptions;

export class CmiClient {
  readonly users: ReturnType<typeof usersApi>;
  readonly userGroups: ReturnType<typeof userGroupsApi>;
  readonly infrastructureErrors: ReturnType<typeof infrastructureErrorsApi>;
  readonly releases: ReturnType<typeof releasesApi>;
  readonly savedSearches: ReturnType<typeof savedSearchesApi>;
  readonly deliveries: ReturnType<typeof deliveriesApi>;
  readonly roles: ReturnType<typeof rolesApi>;
  readonly permissions: ReturnType<typeof permissionsApi>;
  readonly buckets: ReturnType<typeof bucketsApi>;
  readonly ingestKeys: ReturnType<typeof ingestKeysApi>;
  readonly sources: ReturnType<typeof logSourcesApi>;
  readonly logRules: ReturnType<typeof logRulesApi>;
  readonly auditLog: ReturnType<typeof auditLogApi>;
  readonly alertDestinations: ReturnType<typeof alertDestinationsApi>;
  readonly alertRules: ReturnType<typeof alertRulesApi>;
  readonly passwordPolicy: ReturnType<typeof passwordPolicyApi>;
  readonly identityProviders: ReturnType<typeof identityProvidersApi>;
  readonly changes: ReturnType<typeof changesApi>;
  readonly session: {
    /** Ends the session the client holds (`DELETE /session`); later calls log in again with the credentials. */
    logout(call?: RequestOptions): Promise<void>;
    /** Whether the client holds a session cookie. */
    readonly active: boolean;
  };
  readonly #http: ReturnType<typeof transport>;

  constructor(options: CmiClientOptions) {
    if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) throw new TypeError('baseUrl must be an http:// or https:// URL');
    // A password in the URL would be repeated by every error message naming the server; fetch refuses it too.
    if (/^https?:\/\/[^/?#]*@/.test(options.baseUrl)) throw new TypeError('baseUrl must not hold credentials (user:password@host): give login with password or apiKey');
    if (options.format !== undefined && options.format !== 'json' && options.format !== 'xml') throw new TypeError('format must be json or xml');
    const http = transport(options);
    this.#http = http;
    this.users = usersApi(http);
    this.userGroups = userGroupsApi(http);
    this.infrastructureErrors = infrastructureErrorsApi(http);
    this.releases = releasesApi(http);
    this.savedSearches = savedSearchesApi(http);
    this.deliveries = deliveriesApi(http);
    this.roles = rolesApi(http);
    this.permissions = permissionsApi(http);
    this.buckets = bucketsApi(http);
    this.ingestKeys = ingestKeysApi(http);
    this.sources = logSourcesApi(http);
    this.logRules = logRulesApi(http);
    this.auditLog = auditLogApi(http);
    this.alertDestinations = alertDestinationsApi(http);
    this.alertRules = alertRulesApi(http);
    this.passwordPolicy = passwordPolicyApi(http);
    this.identityProviders = identityProvidersApi(http);
    this.changes = changesApi(http);
    this.session = {
      async logout(call: RequestOptions = {}) {
        if (!http.hasSession) return;
        try {
          await http.request('DELETE', '/session', call);
        } finally {
          http.forgetSession();
        }
      },
      get active() {
        return http.hasSession;
      },
    };
  }

  /** The server's version (`GET /version`), which also checks the credentials. */
  async version(call: RequestOptions = {}): Promise<string> {
    const answer = await this.#http.request('GET', '/version', call);
    return decodeRecord(versionResource, answer.body, this.#http.format).version;
  }
}

export * from './errors.js';
export { parseDatetime } from './datetime.js';
export type { Page, PageParams } from './pagination.js';
export type { Activity, AuditEvent, BreakdownGroup, Delivery, Format, HistogramBucket, InfrastructureError, IngestKey, Note, Occurrence, RecordOf, Role, Triage, User, UserGroup } from './records.js';
export type { Query, RequestOptions, TransportOptions } from './transport.js';
export type { NewUserGroup, UserGroupChanges } from './user-groups.js';
export type { TwoFactorEnrolment, TwoFactorStatus } from './two-factor.js';
export type { NewUser, UserApiKey, UserApiKeyWithKey, UserChanges, UserFilters, UserListParams, UserWithApiKey } from './users.js';
export type { UserWhiteList, UserWhiteListFields } from './user-white-lists.js';
export type { YubiKey } from './yubi-keys.js';
export type { AccessLogItem, LoginValidation } from './account-security.js';
export type { ErrorFilters, ErrorListParams, ErrorFacet, ErrorReport, Release, TriageChange } from './infrastructure-errors.js';
export type { SavedSearch, SavedSearchFields } from './saved-searches.js';
export type { NewRole, Permission, RoleChanges, RoleRecord } from './roles.js';
export type { BillingBucket, BucketChanges, NewBucket } from './buckets.js';
export type { Change, ChangeEdits, NewChange } from './changes.js';
export type { LogRule, LogRuleChanges, NewLogRule } from './log-rules.js';
export type { PasswordPolicy, PasswordPolicyChanges } from './password-policy.js';
export type { IngestKeyChanges, NewIngestKey } from './ingest-keys.js';
export type { LogSource, SourceFilters } from './log-sources.js';
export type { AuditFilters, AuditListParams } from './audit-log.js';
export type { IdentityProvider, IdentityProviderChanges, IdentityProviderKind, IdentityProviderMapping, NewIdentityProvider } from './identity-providers.js';
export type { AlertDestination, AlertDestinationChanges, AlertRule, AlertRuleChanges, NewAlertDestination, NewAlertRule } from './alert-routing.js';
