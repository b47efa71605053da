import { identityProviderResource, type PROVIDER_KINDS } from '../identity/identity-provider.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

const PATH = '/sysadmin_tools/identity_providers';

/** `oidc`, `saml` or `ldap` (docs/api.md#identity-providers). */
export type IdentityProviderKind = (typeof PROVIDER_KINDS)[number];

/** A provider's group (its name, or its full DN) given cmi roles and a user group at every sign-in. */
export interface IdentityProviderMapping {
  group: string;
  role_ids: number[];
  user_group_id: number | null;
}

/**
 * An identity provider (docs/api.md#identity-providers): `settings` by its kind, whose secrets
 * (`client_secret`, `bind_password`) are always null; `mappings` a list.
 */
export type IdentityProvider = Omit<RecordOf<typeof identityProviderResource>, 'kind' | 'mappings'> & { kind: IdentityProviderKind; mappings: IdentityProviderMapping[] };

/**
 * The fields of a new provider (docs/api.md#identity-providers): `settings` by its kind (a list
 * setting, as `scopes`, may be a list or its names separated by commas; a flag, `true` or `false`).
 */
export interface NewIdentityProvider {
  kind: IdentityProviderKind;
  label: string;
  settings: Record<string, unknown>;
  enabled?: boolean;
  mappings?: IdentityProviderMapping[];
  jit_provisioning?: boolean;
}

/**
 * What `PUT .../identity_providers/:id` changes: the settings it names, one by one (the others are
 * kept); a secret must be given again when the server it goes to changes. The kind never changes.
 */
export type IdentityProviderChanges = Partial<Omit<NewIdentityProvider, 'kind'>>;

/** `client.identityProviders`: the OpenID Connect, SAML and LDAP providers people sign in through (docs/api.md#identity-providers). */
export function identityProvidersApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(identityProviderResource, http.format === 'json' ? unwrap(identityProviderResource, answer.body) : answer.body, http.format) as unknown as IdentityProvider;
  const path = (id: number) => `${PATH}/${id}`;
  return {
    list(params: PageParams = {}): Promise<Page<IdentityProvider>> {
      return fetchPage(http, identityProviderResource, PATH, params) as unknown as Promise<Page<IdentityProvider>>;
    },
    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<IdentityProvider, void, undefined> {
      return walkPages((page) => this.list({ ...params, page }), (provider) => provider.id);
    },
    async get(id: number, call: RequestOptions = {}): Promise<IdentityProvider> {
      return one(await http.request('GET', path(id), call));
    },
    async create(fields: NewIdentityProvider, call: RequestOptions = {}): Promise<IdentityProvider> {
      return one(await http.request('POST', PATH, { ...call, body: { identity_provider: fields } }));
    },
    /** Answers nothing (204); `get` reads the changed provider. */
    async update(id: number, changes: IdentityProviderChanges, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', path(id), { ...call, body: { identity_provider: changes } });
    },
    /** Removes the provider: the accounts it signed in stay, unlinked. */
    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(id), call);
    },
  };
}
