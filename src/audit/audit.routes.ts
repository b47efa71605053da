import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import type { QueryParameter, RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import type { AuditReader, AuditTrail } from './audit-trail.js';
import { auditEventResource as resource } from './audit-event.resource.js';
import { parseAuditQuery } from './audit-query.js';

type Query = Record<string, string | string[]>;

/** The audit list's filters (docs/api.md#audit-log; audit/audit-query.ts). */
export const AUDIT_FILTERS: readonly QueryParameter[] = [
  { name: 'actor_id', type: 'integer', description: 'Events of this user' },
  { name: 'action', type: 'string', description: 'Events of this action, e.g. user.update' },
  { name: 'target_type', type: 'string', description: 'Events on targets of this type, e.g. user' },
  { name: 'target_id', type: 'integer', description: 'Events on the target of this id' },
  { name: 'since', type: 'datetime', description: 'Events at or after this time' },
  { name: 'until', type: 'datetime', description: 'Events at or before this time' },
];

export const AUDIT_ROUTES: readonly RouteSpec[] = [
  {
    method: 'GET', path: '/sysadmin_tools/audit_log', summary: 'A page of the audit trail, newest first, narrowed by the filters given', who: 'holders of audit_log.read',
    formats: true, paginated: true, query: AUDIT_FILTERS, answers: { 200: { list: resource } },
  },
];

export interface AuditRoutesOptions {
  audit: AuditTrail;
  lists: ListSettings;
}

/** The request's reader: its user's permissions (users/request-gate.ts sets `actor` on every request). */
const readerOf = (request: FastifyRequest): AuditReader => (request as FastifyRequest & { actor: AuditReader }).actor;

/** The audit trail (docs/api.md#audit-log); not cached: every change writes it. */
export const auditRoutes: FastifyPluginCallback<AuditRoutesOptions> = (app, { audit, lists }, done) => {
  app.get('/sysadmin_tools/audit_log', { config: { paginated: true } }, async (request, reply) => {
    const query = request.query as Query;
    const pagination = parsePagination(request.requestPath.pagination, query, lists);
    const filters = parseAuditQuery(query);
    const { items, total } = await audit.list(readerOf(request), filters, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, query));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
  });
  done();
};
