import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** A saved search (docs/search.md#saved-searches). */
export const savedSearchResource = {
  root: 'saved_search',
  plural: 'saved_searches',
  fields: [
    ['id', 'integer'],
    ['name', 'string'],
    ['query', 'string'],
    ['shared', 'boolean'],
    ['user_id', 'integer'],
  ],
} as const satisfies ResourceDefinition;
