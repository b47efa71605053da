import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** An alert destination (docs/api.md#alert-routing): `secret` and `smtp_password` are always null (write-only). */
export const alertDestinationResource = {
  root: 'alert_destination',
  plural: 'alert_destinations',
  fields: [
    ['id', 'integer'],
    ['label', 'string'],
    ['kind', 'string'],
    ['url', 'string', 'nullable'],
    ['secret', 'string', 'nullable'],
    ['smtp_host', 'string', 'nullable'],
    ['smtp_port', 'integer', 'nullable'],
    ['smtp_security', 'string', 'nullable'],
    ['smtp_user', 'string', 'nullable'],
    ['smtp_password', 'string', 'nullable'],
    ['from', 'string', 'nullable'],
    ['to', 'json'],
    ['enabled', 'boolean'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
  ],
  values: { kind: ['webhook', 'slack', 'email'], smtp_security: ['none', 'starttls', 'tls'] },
} as const satisfies ResourceDefinition;

/** An alert rule (docs/api.md#alert-routing): `events` and `destination_ids` are lists (in XML, their JSON text). */
export const alertRuleResource = {
  root: 'alert_rule',
  plural: 'alert_rules',
  fields: [
    ['id', 'integer'],
    ['label', 'string'],
    ['events', 'json'],
    ['component', 'string', 'nullable'],
    ['host', 'string', 'nullable'],
    ['error_class', 'string', 'nullable'],
    ['error_class_prefix', 'string', 'nullable'],
    ['spike_threshold', 'integer', 'nullable'],
    ['spike_window', 'integer', 'nullable'],
    ['cooldown', 'integer', 'nullable'],
    ['silent_minutes', 'integer', 'nullable'],
    ['destination_ids', 'json'],
    ['enabled', 'boolean'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
  ],
} as const satisfies ResourceDefinition;
