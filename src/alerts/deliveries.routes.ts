import type { FastifyInstance, FastifyRequest } from 'fastify';
import { deliveryResource as resource } from './delivery.resource.js';
import { infrastructureErrorResource } from '../tracker/infrastructure-error.resource.js';
import type { AppContext } from '../app/context.js';
import { paginationHeaders, parsePagination } from '../shared/pagination.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';

type Query = Record<string, string | string[]>;

/**
 * Reporting an error and the list of webhook deliveries (docs/reporting-and-alerts.md; administrators
 * only: alerts/reporting.ts, alerts/deliveries.service.ts).
 */
export function deliveriesRoutes(app: FastifyInstance, { errorReporting, webhookDeliveries, config }: AppContext): void {
  const pageOf = (request: FastifyRequest) => parsePagination(request.requestPath.pagination, request.query as Query, config);

  app.post<{ Params: { id: string } }>('/sysadmin_tools/infrastructure/errors/:id/report', async (request, reply) => {
    const record = await errorReporting.report(request.viewer, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource: infrastructureErrorResource, record });
  });

  app.get('/sysadmin_tools/infrastructure/deliveries', { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await webhookDeliveries.list(request.viewer, request.query as Query, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
  });
}
