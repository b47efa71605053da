import type { AuditRecorder } from '../audit/audit-trail.js';
import { USER_ROLE_ID } from '../roles/permissions.js';
import type { Clock } from '../shared/clock.js';
import { userLimits } from '../shared/limits.js';
import type { User } from '../users/user.js';
import { EMAIL, LOGIN } from '../users/users.service.js';
import type { UsersRepository } from '../users/users.store.js';
import { type ExternalIdentity, IdentityRefused } from './external-identity.js';
import { type IdentityProvider, mappingMatches } from './identity-provider.js';
import type { IdentityProvidersRepository } from './identity-providers.store.js';

/** The roles and the user group a person's groups at the provider give it; undefined when the provider maps none. */
export function mappedAccess(provider: Pick<IdentityProvider, 'mappings'>, groups: readonly string[]): { role_ids: number[]; user_group_id: number | null } | undefined {
  if (provider.mappings.length === 0) return undefined;
  const matching = provider.mappings.filter((mapping) => mappingMatches(mapping, groups));
  const roleIds = [...new Set(matching.flatMap((mapping) => mapping.role_ids))];
  return { role_ids: roleIds.length > 0 ? roleIds : [USER_ROLE_ID], user_group_id: matching.find((mapping) => mapping.user_group_id !== null)?.user_group_id ?? null };
}

const sameSet = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((id) => b.includes(id));

/**
 * The account of a person an identity provider vouched for (docs/security.md#identity-providers): the
 * account linked to its subject at that provider, or, on a first sign-in where the provider allows it
 * (`jit_provisioning`), a new account with the login and email the provider gave (refused when either
 * belongs to another account), linked to it, without a cmi password. The provider's mappings give its
 * roles and user group at every sign-in; a provider without mappings leaves them as they are (a new
 * account gets the role `user`). Refusals are IdentityRefused, with what to do.
 */
export function identitySignIn(
  providers: IdentityProvidersRepository,
  users: UsersRepository,
  unknownRoleIds: (ids: number[]) => Promise<number[]>,
  clock: Clock,
  audit: AuditRecorder,
  /** Drops the user's verified credentials at once (users/verification-cache.ts), after its roles changed. */
  credentialsChanged: (userId: number) => void = () => {},
) {
  /** The mapped roles that still exist (a mapping may name a role deleted since), never none. */
  async function existingRoles(roleIds: number[]): Promise<number[]> {
    const unknown = await unknownRoleIds(roleIds);
    const kept = roleIds.filter((id) => !unknown.includes(id));
    return kept.length > 0 ? kept : [USER_ROLE_ID];
  }

  async function provision(provider: IdentityProvider, identity: ExternalIdentity, address: string): Promise<User> {
    if (!provider.jit_provisioning) {
      throw new IdentityRefused(`No cmi account is linked to this ${provider.label} identity, and ${provider.label} does not create accounts: ask an administrator`);
    }
    const login = identity.login?.trim() ?? '';
    // Stored in lower case, as every account's (docs/limits.md#users).
    const email = identity.email?.trim().toLowerCase() ?? '';
    if (login.length < userLimits.loginMin || login.length > userLimits.loginMax || !LOGIN.test(login)) {
      throw new IdentityRefused(`${provider.label} gave no login cmi can use for a new account (${userLimits.loginMin} to ${userLimits.loginMax} letters, digits, _ . @ -): check its login setting`);
    }
    if (!EMAIL.test(email) || email.length > userLimits.email) throw new IdentityRefused(`${provider.label} gave no email address for a new account: check its email setting`);
    const taken = await users.takenFields({ login, email });
    if (taken.length > 0) {
      throw new IdentityRefused(`The ${taken.join(' and ')} ${provider.label} gave already belong${taken.length === 1 ? 's' : ''} to another cmi account: an administrator must link or rename it`);
    }
    const access = mappedAccess(provider, identity.groups);
    const user = await users.create({
      login, email, password_hash: '', first_name: (identity.firstName ?? '').slice(0, 255), last_name: (identity.lastName ?? '').slice(0, 255),
      role_ids: await existingRoles(access?.role_ids ?? [USER_ROLE_ID]), user_group_id: access?.user_group_id ?? null, time_zone: null, locale: null,
    }, clock());
    if (!(await providers.link(provider.id, identity.subject, user.id, clock()))) {
      // Another sign-in of the same person linked its own new account first: this one goes.
      await users.remove(user.id);
      throw new IdentityRefused('This identity was being linked by another sign-in at the same time: sign in again');
    }
    await audit.record({ id: user.id, login: user.login, credential: 'sso', address }, {
      action: 'user.create', target_type: 'user', target_id: user.id, changes: { login, email, identity_provider_id: provider.id, role_ids: user.roles.map((role) => role.id) },
    });
    return user;
  }

  /** Applies the provider's mappings to a linked account (a person removed from a group loses what it gave). */
  async function remap(provider: IdentityProvider, user: User, identity: ExternalIdentity, address: string): Promise<User> {
    const access = mappedAccess(provider, identity.groups);
    if (access === undefined) return user;
    const roleIds = await existingRoles(access.role_ids);
    const held = user.roles.map((role) => role.id);
    if (sameSet(roleIds, held) && access.user_group_id === user.user_group_id) return user;
    const changed = await users.update(user.id, { role_ids: roleIds, user_group_id: access.user_group_id }, clock());
    // The last active administrator keeps its role: a provider's groups never lock everyone out.
    if (changed.outcome !== 'changed') return user;
    credentialsChanged(user.id);
    await audit.record({ id: user.id, login: user.login, credential: 'sso', address }, {
      action: 'user.update', target_type: 'user', target_id: user.id, changes: { role_ids: [held, roleIds], user_group_id: [user.user_group_id, access.user_group_id], identity_provider_id: provider.id },
    });
    return changed.user;
  }

  return {
    /** The account `identity` signs in to at `provider`, created or re-mapped as the provider says. */
    async accountOf(provider: IdentityProvider, identity: ExternalIdentity, address: string): Promise<User> {
      if (identity.subject === '' || identity.subject.length > 1024) throw new IdentityRefused(`${provider.label} gave no usable subject for this person`);
      const linked = await providers.linkedUser(provider.id, identity.subject);
      const user = linked === undefined ? undefined : await users.findById(linked);
      if (user === undefined) return provision(provider, identity, address);
      await providers.signedIn(provider.id, identity.subject, clock());
      return remap(provider, user, identity, address);
    },
  };
}

export type IdentitySignIn = ReturnType<typeof identitySignIn>;
