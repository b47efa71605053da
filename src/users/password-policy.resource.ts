import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** The password policy (docs/api.md#password-policy; docs/security.md#password-policy). */
export const passwordPolicyResource = {
  root: 'password_policy',
  plural: 'password_policies',
  fields: [
    ['min_length', 'integer'],
    ['require_upper', 'boolean'],
    ['require_lower', 'boolean'],
    ['require_digit', 'boolean'],
    ['require_symbol', 'boolean'],
    ['history', 'integer'],
    ['expiry_months', 'integer'],
    ['lockout_attempts', 'integer'],
    ['lockout_minutes', 'integer'],
  ],
} as const satisfies ResourceDefinition;
