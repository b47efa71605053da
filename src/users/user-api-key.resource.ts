import type { ResourceDefinition, ResourceRecord } from '../http/render/resource-definition.js';
import type { UserApiKey } from './user-api-keys.store.js';

/** One of a user's API keys (docs/api.md#api-keys): never the key, but once, in `api_key`, as it is made. */
export const userApiKeyResource = {
  root: 'user_api_key',
  plural: 'user_api_keys',
  fields: [
    ['id', 'integer'],
    ['user_id', 'integer'],
    ['description', 'string'],
    ['default', 'boolean'],
    ['created_at', 'datetime'],
    ['last_used_at', 'datetime', 'nullable'],
    ['api_key', 'string'],
  ],
  optional: ['api_key'],
} as const satisfies ResourceDefinition;

/** OnApp's answer to generate: `{"api_key": "..."}`, `<hash><api_key>...</api_key></hash>`. */
export const generatedApiKeyResource = {
  root: 'hash',
  plural: 'hashes',
  schema: 'generated_api_key',
  fields: [['api_key', 'string']],
  unwrappedJson: true,
} as const satisfies ResourceDefinition;

export function presentApiKey(key: UserApiKey, extra: { api_key?: string } = {}): ResourceRecord {
  const { id, user_id, description, created_at, last_used_at } = key;
  return { id, user_id, description, default: key.default, created_at, last_used_at, ...extra };
}
