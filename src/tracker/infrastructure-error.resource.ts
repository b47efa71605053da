import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** The nine fields of an infrastructure error, in their wire order (docs/api.md#infrastructure-errors). */
export const infrastructureErrorResource = {
  root: 'infrastructure_error',
  plural: 'infrastructure_errors',
  fields: [
    ['id', 'integer'],
    ['backtrace', 'string'],
    ['counter', 'integer'],
    ['created_at', 'datetime'],
    ['error_class', 'string'],
    ['fingerprint', 'string'],
    ['message', 'string'],
    ['reported', 'boolean'],
    ['updated_at', 'datetime'],
  ],
} as const satisfies ResourceDefinition;
