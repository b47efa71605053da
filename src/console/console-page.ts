import type { PasswordExpiry } from '../users/password-expiry.js';
import type { PasswordPolicyService } from '../users/password-policy.service.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorReporting } from '../alerts/reporting.js';
import type { AuditTrail } from '../audit/audit-trail.js';
import type { AlertRoutingService } from '../alerts/alert-routing.service.js';
import type { BucketsService } from '../buckets/buckets.service.js';
import type { RolesService } from '../roles/roles.service.js';
import type { Clock } from '../shared/clock.js';
import type { IngestKeysService } from '../ingest/ingest-keys.service.js';
import type { LogSourcesService } from '../logs/log-sources.service.js';
import type { TrackerService } from '../tracker/tracker.service.js';
import type { TriageService } from '../tracker/triage.service.js';
import type { Authenticator } from '../users/authentication.js';
import type { UserGroupsService } from '../user-groups/user-groups.service.js';
import type { SessionTokens } from '../users/sessions.js';
import type { TwoFactorService } from '../users/two-factor.service.js';
import type { UsersService } from '../users/users.service.js';
import type { UserWhiteListsService } from '../users/user-white-lists.service.js';
import type { AccountSecurityService } from '../users/account-security.service.js';
import type { AccountUnlock } from '../users/account-unlock.js';
import type { SignInHandoff } from '../users/sign-in-handoff.js';
import type { IdentityProvidersService } from '../identity/identity-providers.service.js';
import type { SsoSignIn } from '../identity/sso-sign-in.js';
import type { Html } from './html.js';
import type { PageContext } from './layout.js';

/** What the console's pages are served from: the same services and rules as the API (docs/console.md). */
export interface ConsoleServices {
  authenticator: Authenticator;
  /** The installation's session tokens (the console derives its CSRF tokens from them). */
  sessionTokens: SessionTokens;
  users: UsersService;
  /** Users' allowed addresses (docs/security.md#allowed-addresses), on the user's page. */
  whiteLists: UserWhiteListsService;
  /** The second factor: the sign-in's second step checks the code with it (docs/security.md#second-factor). */
  twoFactor: TwoFactorService;
  /** Sessions and access history: the user page's last access log (users/account-security.service.ts). */
  accountSecurity?: AccountSecurityService;
  /** Unlocking by the mailed token: the unlock page (users/account-unlock.ts). */
  accountUnlock?: AccountUnlock;
  /** The sign-in form's hand-off codes (users/sign-in-handoff.ts): /console/sign-in/complete. */
  signInHandoff?: SignInHandoff;
  roles: RolesService;
  buckets: BucketsService;
  userGroups: UserGroupsService;
  tracker: TrackerService;
  /** Error triage: status, assignee, snooze, notes, activity (docs/console.md#triage). */
  triage: TriageService;
  errorReporting: ErrorReporting;
  ingestKeys: IngestKeysService;
  logSources: LogSourcesService;
  audit: AuditTrail;
  alertRouting: AlertRoutingService;
  /** Identity providers: their management page (identity/identity-providers.service.ts). */
  identityProviders?: IdentityProvidersService;
  /** Signing in through OpenID Connect and SAML providers (identity/sso-sign-in.ts): the sign-in page's buttons. */
  sso?: SsoSignIn;
  /** CMI_PUBLIC_URL when set: the DSNs start with it (else with the address the request reached). */
  publicUrl: string | undefined;
  clock: Clock;
  /** The password policy's expiry (users/password-expiry.ts); the password policy's page. */
  passwordExpiry?: PasswordExpiry;
  passwordPolicy?: PasswordPolicyService;
}

/**
 * The policy of docs/console.md#security: only this origin's own files, no inline script or style,
 * never framed, forms post only here (and, on the one page that posts a SAML request to its identity
 * provider, to that provider's origin too).
 */
export function contentSecurityPolicy(formActionOrigin?: string): string {
  return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    + `frame-ancestors 'none'; form-action 'self'${formActionOrigin === undefined ? '' : ` ${formActionOrigin}`}; base-uri 'none'`;
}

/** Sends a page of the console. */
export function sendPage(reply: FastifyReply, body: Html, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(body.text);
}

/** Options of every console route: the API's gate asks for no credentials here, the console's own hook does. */
export const consoleRoute = (anonymous = false) => ({ config: { public: true, consoleAnonymous: anonymous } });

/** The form fields of a POST (URL-encoded); nothing else is a form of the console. */
export function formOf(request: FastifyRequest): URLSearchParams {
  return request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
}

/** Who is looking and the CSRF token of their session, for a page of a signed-in user. */
export function pageContext(request: FastifyRequest, { sessionTokens, clock }: ConsoleServices): PageContext {
  if (!request.session) throw new Error('a console page rendered without a session (console/console.plugin.ts signs every one in)');
  return { viewer: request.viewer, csrf: sessionTokens.csrfToken(request.session), now: clock() };
}

/** Every record of a paged list, a page of 100 at a time (the pickers' roles and buckets). */
export async function everyRecord<T>(page: (limit: number, offset: number) => Promise<{ items: T[]; total: number }>): Promise<T[]> {
  const all: T[] = [];
  for (;;) {
    const { items, total } = await page(100, all.length);
    all.push(...items);
    if (items.length === 0 || all.length >= total) return all;
  }
}
