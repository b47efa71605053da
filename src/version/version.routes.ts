import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { versionResource } from './version.resource.js';
import { renderResponse, sendRendered } from '../http/respond.js';

export const VERSION_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/version', summary: 'The installation\'s version; 200 only for valid credentials', who: 'any user', formats: true, answers: { 200: { record: versionResource } } },
];

/** The installation's version (docs/api.md#version). */
export const versionRoutes: FastifyPluginCallback<{ version: string }> = (app, { version }, done) => {
  // The same answer for the life of the process: rendered (bytes and ETag) once per format, not per request.
  const payload = { kind: 'record', resource: versionResource, record: { version } } as const;
  const answers = { json: renderResponse('json', payload, {}), xml: renderResponse('xml', payload, {}) };
  app.get('/version', (request, reply) => sendRendered(reply, answers[request.format]));
  done();
};
