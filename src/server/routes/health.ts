import type { FastifyInstance } from 'fastify';
import { healthResource as resource } from '../../resources/health.js';
import { type Database, pendingMigrations } from '../../store/database.js';
import { sendPayload } from '../respond.js';

/** Probes for load balancers and orchestrators: no credentials, tiny bodies. */
export function healthRoutes(app: FastifyInstance, database: Database): void {
  const probe = { config: { public: true } };

  /** The process is up and serving. */
  app.get('/health/live', probe, (request, reply) => {
    return sendPayload(reply, request.format, { kind: 'record', resource, record: { status: 'ok' } });
  });

  /** The database answers and has every migration this cmi needs: 200, else 503. */
  app.get('/health/ready', probe, async (request, reply) => {
    let status = 'ok';
    try {
      if ((await pendingMigrations(database)).length > 0) status = 'migrations pending';
    } catch {
      status = 'database unreachable';
    }
    reply.code(status === 'ok' ? 200 : 503);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: { status } });
  });
}
