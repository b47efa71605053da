import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { bearerMatches } from './bearer-token.js';
import type { Metrics } from './metrics.js';
import { sendPayload } from '../http/respond.js';

export const METRICS_ROUTE: RouteSpec = {
  method: 'GET', path: '/metrics', summary: 'Prometheus metrics of this process (bearer CMI_METRICS_TOKEN)', who: 'metrics token', formats: false, answers: { 200: { document: 'prometheus' } },
};

/**
 * `GET /metrics` on the API port, for `Authorization: Bearer <CMI_METRICS_TOKEN>` only
 * (docs/operations.md#metrics); not registered at all without a token.
 */
export const metricsRoutes: FastifyPluginCallback<{ metrics: Metrics; token: string }> = (app, { metrics, token }, done) => {
  app.get('/metrics', { config: { public: true } }, async (request, reply) => {
    if (!bearerMatches(request.headers.authorization, token)) {
      reply.code(401).header('www-authenticate', 'Bearer realm="cmi-metrics"');
      return sendPayload(reply, request.format, { kind: 'errors', messages: { base: ['Access denied'] } });
    }
    const text = await metrics.scrape();
    return reply.header('content-type', metrics.contentType).send(text);
  });
  done();
};
