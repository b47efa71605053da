import type { FastifyInstance } from 'fastify';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import { revokedSessionsRepository } from '../users/revoked-sessions.store.js';
import type { UsersRepository } from '../users/users.store.js';
import { identityDirectory } from './identity-directory.js';
import { identityProvidersRoutes } from './identity-providers.routes.js';
import { identityProvidersService } from './identity-providers.service.js';
import { identityProvidersRepository } from './identity-providers.store.js';
import { identitySignIn } from './identity-sign-in.js';
import { ssoSignIn } from './sso-sign-in.js';

/** What the identity providers are made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface IdentityPieces {
  database: Database;
  clock: Clock;
  audit: AuditRecorder;
  /** The users' store: the accounts providers link, make and map. */
  users: UsersRepository;
  lists: ListSettings;
  /** The users' verification cache's signals: a user's roles changed, or anyone's credentials may have. */
  credentialsChanged: (userId: number) => void;
  allCredentialsChanged: () => void;
}

/**
 * Signing in through the identity the organisation runs (docs/security.md#identity-providers): gives
 * the providers' service (API, CLI, console), the browser sign-ins the console runs (OpenID Connect,
 * SAML) and the LDAP directories the password paths ask (wired into the users' authenticator by the
 * composition root); registers `/sysadmin_tools/identity_providers`.
 */
export function identityPlugin({ database, clock, audit, users, lists, credentialsChanged, allCredentialsChanged }: IdentityPieces) {
  const repository = identityProvidersRepository(database);
  const service = identityProvidersService(repository, { unknownRoleIds: (ids) => users.unknownRoleIds(ids), userGroupExists: (id) => users.userGroupExists(id) }, clock, audit, allCredentialsChanged);
  const accounts = identitySignIn(repository, users, (ids) => users.unknownRoleIds(ids), clock, audit, credentialsChanged);
  return {
    service,
    sso: ssoSignIn(repository, accounts, revokedSessionsRepository(database), clock),
    directory: identityDirectory(repository, accounts),
    async register(app: FastifyInstance): Promise<void> {
      await app.register(identityProvidersRoutes, { providers: service, lists });
    },
  };
}
