import type { FastifyInstance } from 'fastify';
import { UNMATCHED_ROUTE } from '../route-label.js';

/**
 * With CMI_ACCESS_LOG=1, one JSON line a request (docs/operations.md#access-log): what was asked (the
 * route pattern, never the URL, which may carry anything), how it ended, who asked and how much was
 * sent. Never a header value, a credential, a cookie or a body. Not registered when off.
 */
export function registerAccessLog(app: FastifyInstance, write: (line: string) => void): void {
  app.addHook('onResponse', (request, reply, done) => {
    const length = reply.getHeader('content-length');
    write(`${JSON.stringify({
      time: new Date().toISOString(),
      method: request.method,
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 1000) / 1000,
      request_id: request.id,
      user_id: request.viewer?.id ?? null,
      actor_id: request.actor?.id ?? null,
      bytes: length === undefined ? null : Number(length),
    })}\n`);
    done();
  });
}
