import type { FastifyInstance, FastifyRequest } from 'fastify';
import { deliveryResource as resource } from '../../resources/delivery.js';
import { infrastructureErrorResource } from '../../resources/infrastructure-error.js';
import type { AppContext } from '../context.js';
import { paginationHeaders, parsePagination } from '../pagination.js';
import { sendPayload } from '../respond.js';
import { parseId } from '../route-params.js';

type Query = Record<string, string | string[]>;

/**
 * Reporting an error and the list of webhook deliveries (docs/reporting-and-alerts.md; administrators
 * only: domain/error-reporting.ts, domain/webhook-deliveries.ts).
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
