import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** How an actor proved who it was (docs/security.md#the-audit-trail); here, so cmi/client reads them without the server's code. */
export const CREDENTIALS = ['password', 'api_key', 'session', 'ingest_key', 'local', 'system', 'sso'] as const;

/** One event of the audit trail (docs/api.md#audit-log); `changes` a JSON object (in XML its text). */
export const auditEventResource = {
  root: 'audit_event',
  plural: 'audit_events',
  fields: [
    ['id', 'integer'],
    ['at', 'datetime'],
    ['actor_id', 'integer', 'nullable'],
    ['actor_login', 'string'],
    ['credential', 'string'],
    ['address', 'string', 'nullable'],
    ['request_id', 'string', 'nullable'],
    ['action', 'string'],
    ['target_type', 'string'],
    ['target_id', 'integer', 'nullable'],
    ['changes', 'json'],
  ],
  values: { credential: CREDENTIALS },
} as const satisfies ResourceDefinition;
