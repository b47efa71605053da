import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** A log source: a (host, program) pair that has sent records (docs/log-sources.md#sources-and-silence). Here, so that `cmi/client`, which reads this definition, loads nothing of the server. */
export const logSourceResource = {
  root: 'log_source',
  plural: 'log_sources',
  fields: [
    ['id', 'integer'],
    ['host', 'string'],
    ['program', 'string'],
    ['component', 'string', 'nullable'],
    ['key_id', 'integer', 'nullable'],
    ['first_seen_at', 'datetime'],
    ['last_seen_at', 'datetime'],
    ['lines', 'integer'],
    ['errors', 'integer'],
  ],
} as const satisfies ResourceDefinition;
