import type { FastifyInstance } from 'fastify';
import { healthResource as resource } from './health.resource.js';
import type { AppContext } from '../app/context.js';
import { sendPayload } from '../http/respond.js';

/** Probes for load balancers and orchestrators: no credentials, tiny bodies. */
export function healthRoutes(app: FastifyInstance, { health }: AppContext): void {
  const probe = { config: { public: true } };

  /** The process is up and serving. */
  app.get('/health/live', probe, (request, reply) => {
    return sendPayload(reply, request.format, { kind: 'record', resource, record: { status: 'ok' } });
  });

  /** The database answers and has every migration this cmi needs: 200, else 503. */
  app.get('/health/ready', probe, async (request, reply) => {
    const status = await health.readiness();
    reply.code(status === 'ok' ? 200 : 503);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: { status } });
  });
}
