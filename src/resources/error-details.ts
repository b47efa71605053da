import type { ResourceDefinition } from './definition.js';

/** One kept occurrence of an infrastructure error (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidoccurrences). */
export const occurrenceResource: ResourceDefinition = {
  root: 'occurrence',
  plural: 'occurrences',
  fields: [
    ['id', 'integer'],
    ['occurred_at', 'datetime'],
    ['host', 'string'],
    ['component', 'string'],
    ['request_id', 'string'],
    ['message', 'string'],
    ['context', 'json'],
  ],
  nullable: new Set(['host', 'component', 'request_id', 'context']),
};

/** Occurrences in one hour or day (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidhistogram). */
export const histogramBucketResource: ResourceDefinition = {
  root: 'bucket',
  plural: 'buckets',
  fields: [
    ['start', 'datetime'],
    ['count', 'integer'],
  ],
};

/** Occurrences on one host or in one component (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidbreakdown); value nil: not given. */
export const breakdownGroupResource: ResourceDefinition = {
  root: 'group',
  plural: 'groups',
  fields: [
    ['value', 'string'],
    ['count', 'integer'],
  ],
  nullable: new Set(['value']),
};
