import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** An operator rule of the log sources (docs/log-sources.md#operator-rules). */
export const logRuleResource = {
  root: 'log_rule',
  plural: 'log_rules',
  fields: [
    ['id', 'integer'],
    ['position', 'integer'],
    ['label', 'string'],
    ['program', 'string', 'nullable'],
    ['pattern', 'string'],
    ['error_class', 'string'],
    ['component', 'string', 'nullable'],
    ['enabled', 'boolean'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
  ],
} as const satisfies ResourceDefinition;
