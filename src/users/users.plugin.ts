import type { FastifyInstance } from 'fastify';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import { accountSecurityRoutes } from './account-security.routes.js';
import { accountSecurityService } from './account-security.service.js';
import { accountSessionsRepository } from './account-sessions.store.js';
import { apiKeyUsage } from './api-key-usage.js';
import { accountMailer, type AccountMailServer } from './account-mail.js';
import { accountUnlock } from './account-unlock.js';
import { accountUnlockRepository } from './account-unlock.store.js';
import { signInFormRoutes } from './sign-in-form.routes.js';
import { signInHandoff } from './sign-in-handoff.js';
import { accessLog } from './last-access-log.js';
import { lastAccessLogRepository } from './last-access-log.store.js';
import { authenticator } from './authentication.js';
import { lockout } from './lockout.js';
import { loginFailuresRepository } from './login-failures.store.js';
import { revokedSessionsRepository } from './revoked-sessions.store.js';
import { sessionRoutes } from './session.routes.js';
import type { SessionTokens } from './sessions.js';
import { twoFactorRoutes } from './two-factor.routes.js';
import { twoFactorService } from './two-factor.service.js';
import { twoFactorRepository } from './two-factor.store.js';
import { userApiKeysRoutes } from './user-api-keys.routes.js';
import { userApiKeysRepository } from './user-api-keys.store.js';
import { usersRoutes } from './users.routes.js';
import { yubiKeysRoutes } from './yubi-keys.routes.js';
import { yubiKeysService } from './yubi-keys.service.js';
import { yubiKeysRepository } from './yubi-keys.store.js';
import { usersService } from './users.service.js';
import { usersRepository } from './users.store.js';
import { verificationCache } from './verification-cache.js';
import { allowedAddressesOf } from './allowed-addresses.js';
import { userWhiteListsRepository } from './user-white-lists.store.js';
import { userWhiteListsRoutes } from './user-white-lists.routes.js';
import { userWhiteListsService } from './user-white-lists.service.js';
import type { PasswordPolicyDefaults } from './password-policy.js';
import { passwordPolicyRoutes } from './password-policy.routes.js';
import { passwordPolicyService } from './password-policy.service.js';
import { passwordPolicyRepository } from './password-policy.store.js';

/** The settings the users read (config.ts states them). */
export interface UsersSettings {
  authCacheSeconds: number;
  lockoutMaxFailures: number;
  lockoutAddressMaxFailures: number;
  lockoutAccountMaxFailures: number;
  lockoutWindowSeconds: number;
  passwordPolicy: PasswordPolicyDefaults;
  /** Where account mail goes (CMI_SMTP_URL...); undefined: none is sent (docs/security.md#unlocking-by-mail). */
  accountMail?: AccountMailServer | undefined;
  /** CMI_SIGN_IN_ORIGINS: who may post the sign-in form (users/sign-in-form.routes.ts). */
  signInOrigins?: readonly string[];
}

/** What the users are made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface UsersPieces {
  database: Database;
  clock: Clock;
  audit: AuditRecorder;
  /** The installation's session tokens (users/sessions.ts). */
  sessions: SessionTokens;
  settings: UsersSettings;
  lists: ListSettings;
  /** Where a failed write of API keys' last use goes (the app's background-fault reporter). */
  keyUsageFault: (error: unknown) => void;
  /** Where a failed write of the last access log goes (the app's background-fault reporter); keyUsageFault when not given. */
  accessLogFault?: (error: unknown) => void;
  /** The address the console's links start with (the unlock link of a locked account). */
  publicUrl?: string;
}

/**
 * The users (accounts, their API keys, sessions and the credentials every request is checked with):
 * gives the authenticator the request gate uses, the accounts service, the users' store (who may be
 * assigned an error) and the credential cache's signals that roles and user groups tell of their
 * changes; registers `/users`, the users' API keys and, apart, the session routes.
 */
export function usersPlugin({ database, clock, audit, sessions, settings, lists, keyUsageFault, accessLogFault = keyUsageFault, publicUrl = '' }: UsersPieces) {
  const users = usersRepository(database);
  // Another process's change to a user drops this one's verified credentials at once (docs/security.md#suspend-now-means-now).
  const cache = verificationCache(clock, { ttlMs: settings.authCacheSeconds * 1000, maxEntries: 10_000 }, {
    version: database.dataVersions.credentials,
    heard: database.dataVersions.credentialsHeard,
  });
  const failures = loginFailuresRepository(database);
  const unlocking = accountUnlock({
    tokens: accountUnlockRepository(database), failures, users, mailer: settings.accountMail === undefined ? undefined : accountMailer(settings.accountMail),
    publicUrl, clock, audit, onFault: accessLogFault,
  });
  // The password policy's lockout values govern the per-account counter, as the policy now held says (docs/security.md#password-policy).
  const passwordPolicy = passwordPolicyService(passwordPolicyRepository(database), clock, audit, settings.passwordPolicy, settings);
  const guesses = lockout(failures, clock, () => ({
    addressMaxFailures: settings.lockoutAddressMaxFailures,
    accountMaxFailures: settings.lockoutAccountMaxFailures,
    unlockByMail: unlocking.mailing,
    ...passwordPolicy.lockout(),
  }));
  const apiKeys = userApiKeysRepository(database);
  const accounts = usersService(users, clock, audit, cache.credentialsChanged, guesses, apiKeys, passwordPolicy.rules);
  const twoFactor = twoFactorService(twoFactorRepository(database), users, clock, audit, cache.credentialsChanged, guesses, accounts.requireCurrentPassword);
  const yubiKeys = yubiKeysService(yubiKeysRepository(database), users, clock, audit, cache.credentialsChanged);
  // When each API key was last used, written apart from the requests (docs/security.md#api-keys).
  // Each user's allowed addresses (docs/security.md#allowed-addresses), read with every verification.
  const whiteLists = userWhiteListsRepository(database);
  const allowedAddresses = userWhiteListsService(whiteLists, users, clock, audit, cache.credentialsChanged);
  const keyUsage = apiKeyUsage((uses) => apiKeys.recordUse(uses), clock, keyUsageFault);
  // Sign-ins, noted on verification and written apart from the requests (docs/security.md#the-last-access-log).
  const accessLogItems = lastAccessLogRepository(database);
  const signIns = accessLog((entries, keep) => accessLogItems.insert(entries, keep), clock, accessLogFault);
  const revokedSessions = revokedSessionsRepository(database);
  const handoff = signInHandoff(sessions, revokedSessions, users, clock);
  const authentication = authenticator({
    users,
    revokedSessions,
    sessions,
    cache,
    lockout: guesses,
    clock,
    apiKeyUsed: (id) => keyUsage.used(id),
    audit,
    allowedAddresses: allowedAddressesOf(whiteLists),
    signedIn: (note) => signIns.note(note),
    accountLocked: (user, until) => unlocking.locked(user, until),
  });
  const accountSecurity = accountSecurityService({
    users,
    accountSessions: accountSessionsRepository(database),
    accessLog: accessLogItems,
    audit,
    credentialsChanged: cache.credentialsChanged,
    allCredentialsChanged: cache.allCredentialsChanged,
  });
  return {
    store: users,
    service: accounts,
    /** Users' allowed addresses (the console's user page). */
    whiteLists: allowedAddresses,
    /** The second factor (docs/security.md#second-factor): the console's sign-in asks it for the code. */
    twoFactor,
    /** Sessions and access history (users/account-security.service.ts), for the console. */
    accountSecurity,
    /** Unlocking by the mailed token (users/account-unlock.ts), for the console's unlock page. */
    accountUnlock: unlocking,
    /** The sign-in form's hand-off codes, which the console redeems (users/sign-in-handoff.ts). */
    signInHandoff: handoff,
    authentication,
    /** Drops every verified credential: a change to a role or a group may change anyone's permissions. */
    allCredentialsChanged: cache.allCredentialsChanged,
    /** Drops one user's verified credentials (its roles changed elsewhere: an identity provider's mappings). */
    credentialsChanged: cache.credentialsChanged,
    /** The password policy: its expiry check runs before every API route (password-expiry.ts). */
    passwordPolicy,
    /** Writes the API keys' use still noted (the app's close). */
    flushKeyUsage: () => Promise.all([keyUsage.flush(), signIns.flush()]).then(() => {}),
    /** `/users` and the users' API keys. */
    async register(app: FastifyInstance): Promise<void> {
      await app.register(usersRoutes, { users: accounts, lists, dataVersion: database.dataVersions.users });
      await app.register(userApiKeysRoutes, { users: accounts, lists });
      await app.register(userWhiteListsRoutes, { whiteLists: allowedAddresses, lists });
      await app.register(twoFactorRoutes, { twoFactor });
      await app.register(yubiKeysRoutes, { yubiKeys, lists });
      await passwordPolicy.load();
      await app.register(passwordPolicyRoutes, { policy: passwordPolicy });
      await app.register(accountSecurityRoutes, { accountSecurity, lists, accountUnlock: unlocking });
    },
    /** Signing in and out (`/session`s), registered after the user groups' routes. */
    async registerSessions(app: FastifyInstance): Promise<void> {
      await app.register(sessionRoutes, { authenticator: authentication, clock });
      await app.register(signInFormRoutes, { authenticator: authentication, sessions, handoff, clock, origins: settings.signInOrigins ?? [] });
    },
  };
}
