import type { FastifyInstance } from 'fastify';
import { parseAuditQuery } from '../audit/audit-query.js';
import { assertPermitted } from '../roles/authorization.js';
import { parsePagination } from '../shared/pagination.js';
import { Unprocessable } from '../shared/problems.js';
import { AUDIT_FILTER_NAMES, type AuditFilterValues, auditListPage } from './audit-page.js';
import { consoleRoute, type ConsoleServices, pageContext, sendPage } from './console-page.js';

type Query = { Querystring: Record<string, string | string[] | undefined> };

const PAGE_LIMITS = { defaultPerPage: 50, maxPerPage: 200 };

/** The audit log (docs/console.md#audit-log): for holders of audit_log.read, with the API's filters. */
export function consoleAuditRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { audit } = services;

  app.get<Query>('/audit', consoleRoute(), async (request, reply) => {
    assertPermitted(request.actor, 'audit_log.read');
    const pagination = parsePagination([], { page: request.query.page, per_page: request.query.per_page }, PAGE_LIMITS);
    // The form sends every field, empty ones too: an empty filter is no filter.
    const given: Record<string, string> = {};
    for (const name of AUDIT_FILTER_NAMES) {
      const value = request.query[name];
      if (typeof value === 'string' && value.trim() !== '') given[name] = value.trim();
    }
    const filters = given as AuditFilterValues;
    const context = pageContext(request, services);
    try {
      const { items, total } = await audit.list(request.actor, parseAuditQuery(given), pagination.perPage, pagination.offset);
      reply.header('x-total', String(total));
      return sendPage(reply, auditListPage(context, { events: items, total, page: pagination.page, perPage: pagination.perPage, filters }));
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return sendPage(reply, auditListPage(context, { events: [], total: 0, page: 1, perPage: pagination.perPage, filters, errors: error.messages }), 422);
    }
  });
}
