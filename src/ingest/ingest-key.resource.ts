import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** An ingest key (docs/api.md#ingest-keys). */
export const ingestKeyResource = {
  root: 'ingest_key',
  plural: 'ingest_keys',
  fields: [
    ['id', 'integer'],
    ['label', 'string'],
    ['component', 'string', 'nullable'],
    ['public_key', 'string'],
    ['dsn', 'string'],
    ['enabled', 'boolean'],
    ['rate_limit_per_minute', 'integer'],
    ['allowed_origins', 'string'],
    ['last_used_at', 'datetime', 'nullable'],
    ['dropped', 'integer'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
  ],
} as const satisfies ResourceDefinition;
