import type { FastifyPluginCallback } from 'fastify';
import { sendPayload } from '../http/respond.js';
import type { RouteSpec } from '../http/route-spec.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { releaseResource } from './release.resource.js';
import type { ReleasesService } from './releases.service.js';

const RELEASES = '/sysadmin_tools/infrastructure/releases';
type Query = Record<string, string | string[]>;

export const RELEASES_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: RELEASES, summary: 'The releases the errors occurred in or that were declared, the newest first', who: 'holders of infrastructure_errors.read', formats: true, paginated: true, answers: { 200: { list: releaseResource } } },
  {
    method: 'POST', path: RELEASES, summary: 'Declares a release ahead of its first event (200 when it is known already)', who: 'holders of infrastructure_errors.triage', formats: true,
    body: { root: 'release', fields: [['name', 'string']], required: ['name'] }, answers: { 200: { record: releaseResource }, 201: { record: releaseResource } },
  },
];

/** `/sysadmin_tools/infrastructure/releases`; who may do what: tracker/releases.service.ts. */
export const releasesRoutes: FastifyPluginCallback<{ releases: ReleasesService; lists: ListSettings }> = (app, { releases, lists }, done) => {
  app.get(RELEASES, { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Query, lists);
    const { items, total } = await releases.list(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource: releaseResource, records: items });
  });

  app.post(RELEASES, async (request, reply) => {
    const { release, created } = await releases.declare(request.actor, request.body);
    reply.code(created ? 201 : 200);
    return sendPayload(reply, request.format, { kind: 'record', resource: releaseResource, record: release });
  });
  done();
};
