import type { ResourceDefinition } from './definition.js';

/** The nine fields of spec 2.2, in its order. */
export const infrastructureErrorResource: ResourceDefinition = {
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
};
