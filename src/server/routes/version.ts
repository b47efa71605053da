import type { FastifyInstance } from 'fastify';
import { versionResource } from '../../resources/version.js';
import type { AppContext } from '../context.js';
import { sendPayload } from '../respond.js';

export function versionRoutes(app: FastifyInstance, context: AppContext): void {
  const record = { version: context.version };
  app.get('/version', (request, reply) => sendPayload(reply, request.format, { kind: 'record', resource: versionResource, record }));
}
