import { auditEventResource } from '../audit/audit-event.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import type { AuditEvent } from './records.js';
import type { Transport } from './transport.js';

const PATH = '/sysadmin_tools/audit_log';

/** What selects audit events (docs/api.md#audit-log); filters combine. */
export interface AuditFilters {
  actor_id?: number;
  /** e.g. `user.update` (docs/security.md#what-is-audited). */
  action?: string;
  target_type?: string;
  target_id?: number;
  since?: Date | string;
  until?: Date | string;
}

export interface AuditListParams extends PageParams, AuditFilters {}

/** `client.auditLog`: the audit trail, newest first, for holders of audit_log.read (docs/client.md#methods). */
export function auditLogApi(http: Transport) {
  const list = (params: AuditListParams) => {
    const { actor_id, action, target_type, target_id, since, until, ...page } = params;
    return fetchPage(http, auditEventResource, PATH, { ...page, query: { actor_id, action, target_type, target_id, since, until } });
  };
  return {
    list(params: AuditListParams = {}): Promise<Page<AuditEvent>> {
      return list(params);
    },
    /** Every event the filters select, page after page. */
    all(params: Omit<AuditListParams, 'page'> = {}): AsyncGenerator<AuditEvent, void, undefined> {
      return walkPages((page) => list({ ...params, page }), (event) => event.id);
    },
  };
}
