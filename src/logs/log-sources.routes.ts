import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { logSourceResource as resource } from './log-source.resource.js';
import type { LogSourcesService } from './log-sources.service.js';

type Query = Record<string, string | string[]>;

export const LOG_SOURCES = '/sysadmin_tools/infrastructure/sources';

export const LOG_SOURCES_ROUTES: readonly RouteSpec[] = [
  {
    method: 'GET', path: LOG_SOURCES, summary: 'A page of log sources: every (host, program) pair that has sent records', who: 'holders of infrastructure_errors.read', formats: true, paginated: true,
    query: [
      { name: 'host', type: 'string', description: 'only this host' },
      { name: 'program', type: 'string', description: "only this program ('' for records that named none)" },
      { name: 'component', type: 'string', description: 'only this component' },
    ],
    answers: { 200: { list: resource } },
  },
];

export interface LogSourcesRoutesOptions {
  sources: LogSourcesService;
  lists: ListSettings;
}

/** The log sources (docs/log-sources.md#sources-and-silence); who may see them: logs/log-sources.service.ts. */
export const logSourcesRoutes: FastifyPluginCallback<LogSourcesRoutesOptions> = (app, { sources, lists }, done) => {
  app.get(LOG_SOURCES, { config: { paginated: true } }, async (request, reply) => {
    const query = request.query as Query;
    const pagination = parsePagination(request.requestPath.pagination, query, lists);
    const { items, total } = await sources.list(request.actor, query, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, query));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
  });
  done();
};
