import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { versionResource } from './version.resource.js';
import { sendPayload } from '../http/respond.js';

export const VERSION_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/version', summary: 'The installation\'s version; 200 only for valid credentials', who: 'any user', formats: true, answers: { 200: { record: versionResource } } },
];

/** The installation's version (docs/api.md#version). */
export const versionRoutes: FastifyPluginCallback<{ version: string }> = (app, { version }, done) => {
  const record = { version };
  app.get('/version', (request, reply) => sendPayload(reply, request.format, { kind: 'record', resource: versionResource, record }));
  done();
};
