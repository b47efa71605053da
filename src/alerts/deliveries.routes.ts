import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import type { ErrorReporting } from './reporting.js';
import type { WebhookDeliveries } from './deliveries.service.js';
import { deliveryResource as resource } from './delivery.resource.js';
import { infrastructureErrorResource } from '../tracker/infrastructure-error.resource.js';
import { ERRORS } from '../tracker/tracker.routes.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';

type Query = Record<string, string | string[]>;

export const ALERTS_ROUTES: readonly RouteSpec[] = [
  { method: 'POST', path: `${ERRORS}/:id/report`, summary: 'Delivers the error to the report webhook, then marks it reported (502 when not taken)', who: 'holders of infrastructure_errors.report', formats: true, answers: { 200: { record: infrastructureErrorResource } } },
  {
    method: 'GET', path: '/sysadmin_tools/infrastructure/deliveries', summary: 'Webhook deliveries: reports and alerts', who: 'holders of webhook_deliveries.read', formats: true, paginated: true,
    query: [{ name: 'state', type: 'string', values: ['pending', 'failed', 'delivered', 'all'], description: 'default all' }],
    answers: { 200: { list: resource } },
  },
];

export interface DeliveriesRoutesOptions {
  errorReporting: ErrorReporting;
  webhookDeliveries: WebhookDeliveries;
  lists: ListSettings;
}

/**
 * Reporting an error and the list of webhook deliveries (docs/reporting-and-alerts.md; administrators
 * only: alerts/reporting.ts, alerts/deliveries.service.ts).
 */
export const deliveriesRoutes: FastifyPluginCallback<DeliveriesRoutesOptions> = (app, { errorReporting, webhookDeliveries, lists }, done) => {
  const pageOf = (request: FastifyRequest) => parsePagination(request.requestPath.pagination, request.query as Query, lists);

  app.post<{ Params: { id: string } }>(`${ERRORS}/:id/report`, async (request, reply) => {
    const record = await errorReporting.report(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource: infrastructureErrorResource, record });
  });

  app.get('/sysadmin_tools/infrastructure/deliveries', { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await webhookDeliveries.list(request.actor, request.query as Query, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
  });
  done();
};
