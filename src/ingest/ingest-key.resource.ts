import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** What sends with a key (docs/sentry.md#ingest-keys). Here, so that `cmi/client`, which reads this definition, loads nothing of the server. */
export const INGEST_KEY_KINDS = ['sentry', 'otlp', 'journald', 'syslog'] as const;

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
    ['kind', 'string'],
    ['allowed_networks', 'string'],
    ['client_certificate_sha256', 'string', 'nullable'],
    ['min_severity', 'integer'],
    ['last_used_at', 'datetime', 'nullable'],
    ['dropped', 'integer'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
  ],
  values: { kind: INGEST_KEY_KINDS },
} as const satisfies ResourceDefinition;
