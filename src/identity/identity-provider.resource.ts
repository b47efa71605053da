import type { ResourceDefinition } from '../http/render/resource-definition.js';

/**
 * The protocols an identity provider speaks (docs/security.md#identity-providers). Here, not in
 * identity-provider.ts, so that `cmi/client`, which reads this definition, loads nothing of the server.
 */
export const PROVIDER_KINDS = ['oidc', 'saml', 'ldap'] as const;

/**
 * An identity provider (docs/api.md#identity-providers): `settings` and `mappings` are JSON (in XML,
 * their JSON text); the settings' secrets (`client_secret`, `bind_password`) are always null.
 */
export const identityProviderResource = {
  root: 'identity_provider',
  plural: 'identity_providers',
  fields: [
    ['id', 'integer'],
    ['kind', 'string'],
    ['label', 'string'],
    ['enabled', 'boolean'],
    ['settings', 'json'],
    ['mappings', 'json'],
    ['jit_provisioning', 'boolean'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
  ],
  values: { kind: PROVIDER_KINDS },
} as const satisfies ResourceDefinition;
