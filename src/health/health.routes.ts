import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import type { HealthService } from './health.service.js';
import { healthResource as resource, readinessResource } from './health.resource.js';
import { sendPayload } from '../http/respond.js';

export const HEALTH_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/health/live', summary: 'The process is up', who: 'anyone', formats: true, answers: { 200: { record: resource } } },
  { method: 'GET', path: '/health/ready', summary: 'The database answers and is migrated: 200, else 503; its schema version', who: 'anyone', formats: true, answers: { 200: { record: readinessResource }, 503: { record: readinessResource } } },
];

/** Probes for load balancers and orchestrators: no credentials, tiny bodies. */
export const healthRoutes: FastifyPluginCallback<{ health: HealthService }> = (app, { health }, done) => {
  const probe = { config: { public: true } };

  /** The process is up and serving. */
  app.get('/health/live', probe, (request, reply) => {
    return sendPayload(reply, request.format, { kind: 'record', resource, record: { status: 'ok' } });
  });

  /** The database answers and has every migration this cmi needs: 200, else 503; with the schema version it has (docs/operations.md#health-probes-for-load-balancers). */
  app.get('/health/ready', probe, async (request, reply) => {
    const { status, schemaVersion } = await health.readiness();
    reply.code(status === 'ok' ? 200 : 503);
    return sendPayload(reply, request.format, { kind: 'record', resource: readinessResource, record: { status, schema_version: schemaVersion ?? null } });
  });
  done();
};
