import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** A billing bucket (docs/api.md#billing-buckets). */
export const bucketResource = {
  root: 'bucket',
  plural: 'buckets',
  // The histogram's buckets share the root: the OpenAPI document names this one BillingBucket.
  schema: 'billing_bucket',
  fields: [
    ['id', 'integer'],
    ['label', 'string'],
    ['currency_code', 'string'],
    ['monthly_price', 'decimal'],
    ['show_price', 'boolean'],
    ['allows_kms', 'boolean'],
    ['allows_mak', 'boolean'],
    ['allows_own', 'boolean'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
  ],
} as const satisfies ResourceDefinition;
