import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { presentWhiteList, userWhiteListResource as resource } from './user-white-list.resource.js';
import type { UserWhiteListsService } from './user-white-lists.service.js';

type WithUser = { Params: { id: string } };
type WithEntry = { Params: { id: string; white_list_id: string } };

const READERS = 'holders of users.read; of users.read.own for itself';
const CHANGERS = 'holders of users.update, for a user who holds no permission they lack';
const BODY = { root: 'user_white_list', fields: [['ip', 'string'], ['description', 'string']] } as const;

export const USER_WHITE_LISTS_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/users/:id/user_white_lists', summary: 'A page of the user\'s allowed addresses (none: any address)', who: READERS, formats: true, paginated: true, answers: { 200: { list: resource } } },
  {
    method: 'POST', path: '/users/:id/user_white_lists', summary: 'Adds an address or CIDR range (IPv4 or IPv6) the user may be used from; from then on every other address is refused', who: CHANGERS, formats: true, location: true,
    body: { ...BODY, required: ['ip'] }, answers: { 201: { record: resource } },
  },
  { method: 'GET', path: '/users/:id/user_white_lists/:white_list_id', summary: 'One of the user\'s allowed addresses', who: READERS, formats: true, answers: { 200: { record: resource } } },
  { method: 'PUT', path: '/users/:id/user_white_lists/:white_list_id', summary: 'Changes an allowed address or its description (the fields bare, as the Go SDK sends them, or under user_white_list)', who: CHANGERS, formats: true, body: BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: '/users/:id/user_white_lists/:white_list_id', summary: 'Removes an allowed address; with none left, any address will do', who: CHANGERS, formats: true, answers: { 204: { empty: true } } },
];

export interface UserWhiteListsRoutesOptions {
  whiteLists: UserWhiteListsService;
  lists: ListSettings;
}

/** A user's allowed addresses as OnApp has them (docs/api.md#allowed-addresses); who may: users/user-white-lists.service.ts. */
export const userWhiteListsRoutes: FastifyPluginCallback<UserWhiteListsRoutesOptions> = (app, { whiteLists, lists }, done) => {
  const location = (request: FastifyRequest, userId: number, id: number) => `/users/${userId}/user_white_lists/${id}.${request.format}`;

  app.get<WithUser>('/users/:id/user_white_lists', { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Record<string, string | string[]>, lists);
    const { items, total } = await whiteLists.list(request.actor, parseId(request.params.id), pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items.map(presentWhiteList) });
  });

  app.post<WithUser>('/users/:id/user_white_lists', async (request, reply) => {
    const userId = parseId(request.params.id);
    const entry = await whiteLists.create(request.actor, userId, request.body);
    reply.code(201).header('location', location(request, userId, entry.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: presentWhiteList(entry) });
  });

  app.get<WithEntry>('/users/:id/user_white_lists/:white_list_id', async (request, reply) => {
    const entry = await whiteLists.get(request.actor, parseId(request.params.id), parseId(request.params.white_list_id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: presentWhiteList(entry) });
  });

  app.put<WithEntry>('/users/:id/user_white_lists/:white_list_id', async (request, reply) => {
    await whiteLists.update(request.actor, parseId(request.params.id), parseId(request.params.white_list_id), request.body);
    return reply.code(204).send();
  });

  // The Go SDK sends its meta as query parameters; they change nothing here.
  app.delete<WithEntry>('/users/:id/user_white_lists/:white_list_id', async (request, reply) => {
    await whiteLists.remove(request.actor, parseId(request.params.id), parseId(request.params.white_list_id));
    return reply.code(204).send();
  });
  done();
};
