import type { ResourceDefinition } from '../http/render/resource-definition.js';
import type { Change } from './change.js';

/** A change to the cloud (docs/changes.md): `hosts` and `components` are lists (in XML, their JSON text), empty meaning all. */
export const changeResource = {
  root: 'change',
  plural: 'changes',
  fields: [
    ['id', 'integer'],
    ['kind', 'string'],
    ['title', 'string'],
    ['release', 'string', 'nullable'],
    ['started_at', 'datetime'],
    ['ended_at', 'datetime', 'nullable'],
    ['hosts', 'json'],
    ['components', 'json'],
    ['created_by', 'integer', 'nullable'],
  ],
} as const satisfies ResourceDefinition;

/** A change as its resource renders it: its lists as JSON text (JSON writes the list, XML the text). */
export const changeRecord = (change: Change) => ({ ...change, hosts: JSON.stringify(change.hosts), components: JSON.stringify(change.components) });
