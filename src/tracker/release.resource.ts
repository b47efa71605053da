import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** A release (docs/api.md#releases); first_seen nil: declared, not seen yet. */
export const releaseResource = {
  root: 'release',
  plural: 'releases',
  fields: [
    ['name', 'string'],
    ['first_seen', 'datetime', 'nullable'],
    ['errors_new', 'integer'],
    ['regressions', 'integer'],
  ],
} as const satisfies ResourceDefinition;
