import type { ResourceDefinition, ResourceRecord } from '../http/render/resource-definition.js';
import { heldRoleResource } from '../roles/role.resource.js';
import type { UserGroup } from './user-group.js';

/** A billing plan as OnApp's user group lists them: cmi has none, so the list is always null. */
const billingPlanResource = {
  root: 'billing_plan',
  plural: 'billing_plans',
  fields: [['id', 'integer'], ['label', 'string']],
} as const satisfies ResourceDefinition;

/** A bucket as OnApp's user group lists them (`user_buckets`): cmi serves the group's one in `bucket_id`, so the list is null. */
const userBucketResource = {
  root: 'user_bucket',
  plural: 'user_buckets',
  fields: [['id', 'integer'], ['label', 'string']],
} as const satisfies ResourceDefinition;

/**
 * A user group (docs/api.md#user-groups). The fields after `updated_at` are OnApp's (its Go SDK's
 * UserGroup, its PHP wrapper's OnApp_UserGroup) that cmi has no use for: always present, always null.
 */
export const userGroupResource = {
  root: 'user_group',
  plural: 'user_groups',
  fields: [
    ['id', 'integer'],
    ['label', 'string'],
    ['identifier', 'string'],
    ['roles', { arrayOf: heldRoleResource }],
    ['bucket_id', 'integer', 'nullable'],
    ['additional_fields', 'json'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
    ['assign_vcloud_roles', 'boolean', 'nullable'],
    ['billing_plans', { arrayOf: billingPlanResource }, 'nullable'],
    ['closed', 'boolean', 'nullable'],
    ['company_billing_plan_id', 'integer', 'nullable'],
    ['datacenter_id', 'integer', 'nullable'],
    ['draas_id', 'integer', 'nullable'],
    ['federation_enabled', 'boolean', 'nullable'],
    ['federation_id', 'integer', 'nullable'],
    ['hypervisor_id', 'integer', 'nullable'],
    ['preconfigured_only', 'boolean', 'nullable'],
    ['provider_vdc_id', 'integer', 'nullable'],
    ['traded', 'boolean', 'nullable'],
    ['user_buckets', { arrayOf: userBucketResource }, 'nullable'],
  ],
} as const satisfies ResourceDefinition;

/** The group as its record is written: its own fields, then OnApp's that cmi has no use for, null. */
export function presentUserGroup(group: UserGroup): ResourceRecord {
  const { id, label, identifier, roles, bucket_id, created_at, updated_at } = group;
  return {
    id, label, identifier, roles, bucket_id, additional_fields: '{}', created_at, updated_at,
    assign_vcloud_roles: null, billing_plans: null, closed: null, company_billing_plan_id: null, datacenter_id: null, draas_id: null,
    federation_enabled: null, federation_id: null, hypervisor_id: null, preconfigured_only: null, provider_vdc_id: null, traded: null, user_buckets: null,
  };
}
