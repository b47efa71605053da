import type { FastifyInstance } from 'fastify';
import { versionResource } from './version.resource.js';
import type { AppContext } from '../app/context.js';
import { sendPayload } from '../http/respond.js';

export function versionRoutes(app: FastifyInstance, context: AppContext): void {
  const record = { version: context.version };
  app.get('/version', (request, reply) => sendPayload(reply, request.format, { kind: 'record', resource: versionResource, record }));
}
