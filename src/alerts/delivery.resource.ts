import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** One webhook delivery, a report or an alert (docs/api.md#get-sysadmin_toolsinfrastructuredeliveries). */
export const deliveryResource = {
  root: 'delivery',
  plural: 'deliveries',
  fields: [
    ['id', 'integer'],
    ['kind', 'string'],
    ['error_id', 'integer'],
    ['url', 'string'],
    ['state', 'string'],
    ['attempts', 'integer'],
    ['last_status', 'integer', 'nullable'],
    ['created_at', 'datetime'],
    ['delivered_at', 'datetime', 'nullable'],
    ['destination_id', 'integer', 'nullable'],
    ['last_error', 'string', 'nullable'],
  ],
  values: { kind: ['report', 'new', 'spike', 'regression', 'test', 'silent', 'back'], state: ['pending', 'delivered', 'failed'] },
} as const satisfies ResourceDefinition;
