import type { FastifyInstance } from 'fastify';
import { bearerMatches } from './bearer-token.js';
import type { Metrics } from './metrics.js';
import { sendPayload } from '../http/respond.js';

/**
 * `GET /metrics` on the API port, for `Authorization: Bearer <CMI_METRICS_TOKEN>` only
 * (docs/operations.md#metrics); not registered at all without a token.
 */
export function metricsRoutes(app: FastifyInstance, metrics: Metrics, token: string): void {
  app.get('/metrics', { config: { public: true } }, async (request, reply) => {
    if (!bearerMatches(request.headers.authorization, token)) {
      reply.code(401).header('www-authenticate', 'Bearer realm="cmi-metrics"');
      return sendPayload(reply, request.format, { kind: 'errors', messages: { base: ['Access denied'] } });
    }
    const text = await metrics.scrape();
    return reply.header('content-type', metrics.contentType).send(text);
  });
}
