import type { ResourceDefinition, ResourceRecord } from '../http/render/resource-definition.js';
import type { AccessLogItem } from './last-access-log.store.js';
import type { LoginValidation } from './account-security.service.js';

/**
 * One row of a user's last access log (docs/api.md#last-access-log): OnApp's `last_access_log_item`
 * (`id`, `user_id`, `ip`, `created_at`, as the PHP wrapper reads it) and cmi's `credential`,
 * `user_agent` and `success`.
 */
export const lastAccessLogItemResource = {
  root: 'last_access_log_item',
  plural: 'last_access_log_items',
  fields: [
    ['id', 'integer'],
    ['user_id', 'integer'],
    ['ip', 'string'],
    ['created_at', 'datetime'],
    ['credential', 'string'],
    ['user_agent', 'string', 'nullable'],
    ['success', 'boolean'],
  ],
} as const satisfies ResourceDefinition;

export function presentAccessLogItem(item: AccessLogItem): ResourceRecord {
  const { id, user_id, ip, created_at, credential, user_agent, success } = item;
  return { id, user_id, ip, created_at, credential, user_agent, success };
}

/** The answer to validate_login: a `user` holding OnApp's User fields `valid` and `message` (docs/api.md#validate-a-login-or-email). */
export const loginValidationResource = {
  root: 'user',
  plural: 'users',
  schema: 'login_validation',
  fields: [
    ['valid', 'boolean'],
    ['message', 'string'],
  ],
} as const satisfies ResourceDefinition;

export const presentLoginValidation = ({ valid, message }: LoginValidation): ResourceRecord => ({ valid, message });
