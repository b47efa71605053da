import type { FastifyPluginCallback } from 'fastify';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import type { RouteSpec } from '../http/route-spec.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { savedSearchResource } from './saved-search.resource.js';
import type { SavedSearchesService } from './saved-searches.service.js';

const SAVED = '/sysadmin_tools/infrastructure/saved_searches';
type Query = Record<string, string | string[]>;
type WithId = { Params: { id: string } };
const WHO = 'holders of infrastructure_errors.read (changes: its owner)';
const BODY = { root: 'saved_search', fields: [['name', 'string'], ['query', 'string'], ['shared', 'boolean']] } as const;

export const SAVED_SEARCHES_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: SAVED, summary: 'The own saved searches and the shared ones of others, by name', who: WHO, formats: true, paginated: true, answers: { 200: { list: savedSearchResource } } },
  { method: 'POST', path: SAVED, summary: 'Saves a search', who: WHO, formats: true, body: { ...BODY, required: ['name', 'query'] }, answers: { 201: { record: savedSearchResource } } },
  { method: 'GET', path: `${SAVED}/:id`, summary: 'One saved search (the own, or a shared one)', who: WHO, formats: true, answers: { 200: { record: savedSearchResource } } },
  { method: 'PUT', path: `${SAVED}/:id`, summary: 'Changes an own saved search', who: WHO, formats: true, body: BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: `${SAVED}/:id`, summary: 'Deletes an own saved search', who: WHO, formats: true, answers: { 204: { empty: true } } },
];

/** `/sysadmin_tools/infrastructure/saved_searches`; who may do what: tracker/saved-searches.service.ts. */
export const savedSearchesRoutes: FastifyPluginCallback<{ savedSearches: SavedSearchesService; lists: ListSettings }> = (app, { savedSearches, lists }, done) => {
  app.get(SAVED, { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Query, lists);
    const { items, total } = await savedSearches.list(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource: savedSearchResource, records: items });
  });

  app.post(SAVED, async (request, reply) => {
    const search = await savedSearches.create(request.actor, request.body);
    reply.code(201).header('location', `${SAVED}/${search.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource: savedSearchResource, record: search });
  });

  app.get<WithId>(`${SAVED}/:id`, async (request, reply) => {
    const search = await savedSearches.get(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource: savedSearchResource, record: search });
  });

  app.put<WithId>(`${SAVED}/:id`, async (request, reply) => {
    await savedSearches.update(request.actor, parseId(request.params.id), request.body);
    return reply.code(204).send();
  });

  app.delete<WithId>(`${SAVED}/:id`, async (request, reply) => {
    await savedSearches.remove(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });
  done();
};
