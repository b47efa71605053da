import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** One kept occurrence of an infrastructure error (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidoccurrences). */
export const occurrenceResource = {
  root: 'occurrence',
  plural: 'occurrences',
  fields: [
    ['id', 'integer'],
    ['occurred_at', 'datetime'],
    ['host', 'string', 'nullable'],
    ['component', 'string', 'nullable'],
    ['request_id', 'string', 'nullable'],
    ['message', 'string'],
    ['context', 'json', 'nullable'],
  ],
} as const satisfies ResourceDefinition;

/** Occurrences in one hour or day (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidhistogram). */
export const histogramBucketResource = {
  root: 'bucket',
  plural: 'buckets',
  fields: [
    ['start', 'datetime'],
    ['count', 'integer'],
  ],
} as const satisfies ResourceDefinition;

/** Occurrences on one host or in one component (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidbreakdown); value nil: not given. */
export const breakdownGroupResource = {
  root: 'group',
  plural: 'groups',
  fields: [
    ['value', 'string', 'nullable'],
    ['count', 'integer'],
  ],
} as const satisfies ResourceDefinition;
