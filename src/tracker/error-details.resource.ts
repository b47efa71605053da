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

/** A release or an environment an error occurred in (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidreleases); first_seen nil: seen before cmi kept it. */
const facetFields = [
  ['name', 'string'],
  ['first_seen', 'datetime', 'nullable'],
  ['last_seen', 'datetime'],
  ['count', 'integer'],
] as const;
export const errorReleaseResource = { root: 'release', schema: 'error_release', plural: 'releases', fields: facetFields } as const satisfies ResourceDefinition;
export const errorEnvironmentResource = { root: 'environment', schema: 'error_environment', plural: 'environments', fields: facetFields } as const satisfies ResourceDefinition;
