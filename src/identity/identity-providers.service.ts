import type { AuditRecorder } from '../audit/audit-trail.js';
import { difference, REDACTED } from '../audit/audit-event.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import { ALL_PERMISSIONS } from '../roles/permissions.js';
import { Forbidden } from '../shared/problems.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { NotFound, Unprocessable } from '../shared/problems.js';
import { type IdentityProvider, type ProviderFields, readProvider, SECRET_SETTINGS, shownSettings } from './identity-provider.js';
import type { IdentityProvidersRepository } from './identity-providers.store.js';

/** The checks a provider's mappings need of the database: the roles and user groups they name exist. */
export interface MappingTargets {
  unknownRoleIds(ids: number[]): Promise<number[]>;
  userGroupExists(id: number): Promise<boolean>;
}

/**
 * A provider vouches for every account linked to it, and its mappings give any role: whoever changes
 * one could sign in as anyone, so a change needs, besides `identity_providers.manage`, every permission
 * there is (docs/security.md#identity-providers).
 */
export const mayChangeProviders = (actor: Pick<Actor, 'permissions'>): boolean => [...ALL_PERMISSIONS].every((permission) => actor.permissions.has(permission));

function assertMayChange(actor: Actor): void {
  assertPermitted(actor, 'identity_providers.manage');
  if (!mayChangeProviders(actor)) throw new Forbidden('You are not authorized to perform this action (needs every permission: an identity provider can sign in as any account linked to it)');
}

/**
 * Identity providers as the API, the CLI and the console manage them (docs/api.md#identity-providers):
 * reading needs `identity_providers.read`, every change `identity_providers.manage` and every other
 * permission; secrets are write-only, and every change is audited with the secrets it replaced named,
 * never shown. `credentialsChanged` drops every verified credential (a directory's passwords among them)
 * at once, in this process, as a change to roles does.
 */
export function identityProvidersService(repository: IdentityProvidersRepository, targets: MappingTargets, clock: Clock, audit: AuditRecorder, credentialsChanged: () => void = () => {}) {
  const providerOf = async (id: number): Promise<IdentityProvider> => {
    const provider = await repository.find(id);
    if (!provider) throw new NotFound();
    return provider;
  };

  /** The mappings' roles and groups must exist (422 naming the mapping). */
  async function assertTargets(fields: ProviderFields): Promise<void> {
    const messages: Record<string, string[]> = {};
    for (const [index, mapping] of fields.mappings.entries()) {
      const unknown = mapping.role_ids.length === 0 ? [] : await targets.unknownRoleIds(mapping.role_ids);
      if (unknown.length > 0) messages[`mappings[${index}].role_ids`] = [`names no role: ${unknown.join(', ')}`];
      if (mapping.user_group_id !== null && !(await targets.userGroupExists(mapping.user_group_id))) messages[`mappings[${index}].user_group_id`] = [`names no user group: ${mapping.user_group_id}`];
    }
    if (Object.keys(messages).length > 0) throw new Unprocessable(messages);
  }

  /** What the audit row says of a provider's fields: its settings as served (secrets null), each secret that changed as `[redacted]`. */
  const audited = (fields: ProviderFields) => ({ ...fields, settings: shownSettings(fields) });
  const secretsChanged = (before: ProviderFields, after: ProviderFields) => Object.fromEntries(
    SECRET_SETTINGS[after.kind].filter((name) => (before.settings as unknown as Record<string, unknown>)[name] !== (after.settings as unknown as Record<string, unknown>)[name]).map((name) => [`settings.${name}`, REDACTED]),
  );
  const record = (actor: Actor, action: string, id: number, changes: Record<string, unknown>) => audit.record(actor, { action, target_type: 'identity_provider', target_id: id, changes });

  return {
    /** 403 unless `actor` may change providers (the console asks before showing a form). */
    assertMayChange,

    async list(actor: Actor, limit: number, offset: number): Promise<Page<IdentityProvider>> {
      assertPermitted(actor, 'identity_providers.read');
      const total = await repository.count();
      return { items: offset >= total ? [] : await repository.page(limit, offset), total };
    },

    async get(actor: Actor, id: number): Promise<IdentityProvider> {
      assertPermitted(actor, 'identity_providers.read');
      return providerOf(id);
    },

    async create(actor: Actor, body: unknown): Promise<IdentityProvider> {
      assertMayChange(actor);
      const fields = readProvider(body, undefined);
      await assertTargets(fields);
      const provider = await repository.create(fields, clock());
      credentialsChanged();
      const { settings, ...rest } = audited(fields);
      await record(actor, 'identity_provider.create', provider.id, { ...rest, settings, ...Object.fromEntries(SECRET_SETTINGS[fields.kind].filter((name) => (fields.settings as unknown as Record<string, unknown>)[name] !== '').map((name) => [`settings.${name}`, REDACTED])) });
      return provider;
    },

    async update(actor: Actor, id: number, body: unknown): Promise<IdentityProvider> {
      assertMayChange(actor);
      const current = await providerOf(id);
      const fields = readProvider(body, current);
      await assertTargets(fields);
      const updated = await repository.update(id, fields, clock());
      credentialsChanged();
      if (!updated) throw new NotFound();
      await record(actor, 'identity_provider.update', id, { ...difference(audited(current), audited(fields)), ...secretsChanged(current, fields) });
      return updated;
    },

    /** Removes it: its accounts stay, unlinked (they sign in only with a cmi password or API key, if they have one). */
    async remove(actor: Actor, id: number): Promise<void> {
      assertMayChange(actor);
      const current = await providerOf(id);
      if (!(await repository.remove(id))) throw new NotFound();
      credentialsChanged();
      await record(actor, 'identity_provider.delete', id, { label: current.label, kind: current.kind });
    },
  };
}

export type IdentityProvidersService = ReturnType<typeof identityProvidersService>;
