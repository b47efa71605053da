import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { QueryParameter, RouteSpec } from '../http/route-spec.js';
import { parseUserListQuery } from './users-query.js';
import type { UsersService } from './users.service.js';
import { may } from '../roles/authorization.js';
import { presentUser, userResource as resource } from './user.resource.js';
import { versionedCache } from '../shared/page-cache.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { type RenderedResponse, renderedCost, renderResponse, sendPayload, sendRendered } from '../http/respond.js';
import { parseId } from '../http/route-params.js';

type WithId = { Params: { id: string } };

const USER_FIELDS = [
  ['login', 'string'],
  ['email', 'string'],
  ['password', 'string'],
  ['first_name', 'string'],
  ['last_name', 'string'],
  ['time_zone', 'string'],
  ['locale', 'string'],
  ['role', 'string'],
  ['role_ids', 'id[]'],
  ['bucket_id', 'integer'],
  ['user_group_id', 'integer'],
] as const;

/** The users list's filters (docs/api.md#users-list-filters; users/users-query.ts). */
const FILTERS: readonly QueryParameter[] = [
  { name: 'q', type: 'string', description: 'Users whose login, email, first or last name holds this text, in any case' },
  { name: 'status', type: 'string', values: ['active', 'suspended', 'deleted'], description: 'Users of this status' },
  { name: 'role_id', type: 'integer', description: 'Users holding this role themselves (not through their group)' },
];
const GROUP_FILTER: QueryParameter = { name: 'user_group_id', type: 'integer', description: 'Members of this user group' };

export const USERS_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/users', summary: 'A page of users (a user sees only itself), narrowed by the filters given', who: 'any user', formats: true, paginated: true, query: [...FILTERS, GROUP_FILTER], answers: { 200: { list: resource } } },
  { method: 'GET', path: '/user_groups/:id/users', summary: 'A page of the group\'s users, as /users lists them', who: 'holders of user_groups.read', formats: true, paginated: true, query: FILTERS, answers: { 200: { list: resource } } },
  {
    method: 'POST', path: '/users', summary: 'Creates a user', who: 'holders of users.create', formats: true, location: true,
    body: { root: 'user', fields: USER_FIELDS, required: ['login', 'email', 'password'] },
    answers: { 201: { record: resource } },
  },
  { method: 'GET', path: '/users/:id', summary: 'One user', who: 'holders of users.read; a user for itself', formats: true, answers: { 200: { record: resource } } },
  {
    method: 'PUT', path: '/users/:id', summary: 'Changes the fields the body names (current_password: a user\'s own new password; through the session cookie, any new login, email or password)', who: 'holders of users.update; a user for itself', formats: true,
    body: { root: 'user', fields: [...USER_FIELDS, ['current_password', 'string']] },
    answers: { 204: { empty: true } },
  },
  { method: 'DELETE', path: '/users/:id', summary: 'Marks the user deleted; a second time removes it', who: 'holders of users.delete', formats: true, answers: { 204: { empty: true } } },
  { method: 'POST', path: '/users/:id/suspend', summary: 'Suspends the user', who: 'holders of users.suspend', formats: true, answers: { 200: { record: resource } } },
  { method: 'POST', path: '/users/:id/activate', summary: 'Activates the user', who: 'holders of users.suspend', formats: true, answers: { 200: { record: resource } } },
  {
    method: 'POST', path: '/users/:id/make_new_api_key', summary: 'The user\'s default API key made anew, shown once in api_key; its named keys stay (through the session cookie, the body carries current_password)', who: 'holders of users.api_key; a user for itself', formats: true,
    body: { root: 'user', fields: [['current_password', 'string']] },
    answers: { 200: { record: resource } },
  },
];

export interface UsersRoutesOptions {
  users: UsersService;
  lists: ListSettings;
  /** The users' data version (db/database.ts dataVersions): cached pages are answered while it holds. */
  dataVersion: () => string | undefined;
}

/** OnApp's user management: administrators manage everyone, a user only itself (users/users.service.ts). */
export const usersRoutes: FastifyPluginCallback<UsersRoutesOptions> = (app, { users, lists, dataVersion }, done) => {
  // Rendered pages, reused whole (bytes, ETag, headers) until the data changes in any process; they
  // cost at most CMI_PAGE_CACHE_BYTES (docs/operations.md#configuration).
  const pages = versionedCache<RenderedResponse>(dataVersion, { maxBytes: lists.pageCacheBytes, costOf: renderedCost, ...(lists.pageCacheMeter ? { meteredAs: [lists.pageCacheMeter, 'users'] as const } : {}) });

  // Not async: a cached page is answered without a promise.
  app.get('/users', { config: { paginated: true } }, (request, reply) => {
    const { viewer, format } = request;
    const scope = may(viewer, 'users.read') ? 'all' : viewer.id;
    // The URL as the request wrote it (its pagination and filters, which the Link headers repeat): a
    // page kept is answered without taking the query apart again. A URL whose query is refused
    // throws below and is never kept.
    const key = `${format}|${scope}|${request.originalUrl}`;
    const cached = pages.peek(key);
    if (cached) return sendRendered(reply, cached);
    const query = request.query as Record<string, string | string[]>;
    const pagination = parsePagination(request.requestPath.pagination, query, lists);
    const filters = parseUserListQuery(query);
    return pages
      .get(key, async () => {
        const { items, total } = await users.list(viewer, pagination.perPage, pagination.offset, filters);
        const headers = paginationHeaders(pagination, total, request.requestPath.listPath, query);
        return renderResponse(format, { kind: 'list', resource, records: items.map((user) => presentUser(user)) }, headers);
      })
      .then((page) => sendRendered(reply, page));
  });

  // Not cached: a group's page is asked for rarely, and the group's existence is checked each time.
  app.get<WithId>('/user_groups/:id/users', { config: { paginated: true } }, async (request, reply) => {
    const query = request.query as Record<string, string | string[]>;
    const pagination = parsePagination(request.requestPath.pagination, query, lists);
    const groupId = parseId(request.params.id);
    const filters = parseUserListQuery(query, { groupList: true });
    const { items, total } = await users.groupMembers(request.actor, groupId, pagination.perPage, pagination.offset, filters);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, query));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items.map((user) => presentUser(user)) });
  });

  app.post('/users', async (request, reply) => {
    const user = await users.create(request.actor, request.body);
    reply.code(201).header('location', `/users/${user.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: presentUser(user) });
  });

  app.get<WithId>('/users/:id', async (request, reply) => {
    const user = await users.get(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: presentUser(user) });
  });

  /** Who acts, from where, and whether through the session cookie (users/users.service.ts needsCurrentPassword). */

  /** A change to the caller's own account may end its sessions: no cookie for one that just ended. */
  const ownAccount = (request: FastifyRequest, reply: FastifyReply, id: number) => {
    if (id === request.actor.id) reply.removeHeader('set-cookie');
  };

  app.put<WithId>('/users/:id', async (request, reply) => {
    const id = parseId(request.params.id);
    await users.update(request.actor, id, request.body);
    ownAccount(request, reply, id);
    return reply.code(204).send();
  });

  // OnApp clients send a body such as {"force": 1}; it changes nothing here.
  app.delete<WithId>('/users/:id', async (request, reply) => {
    const id = parseId(request.params.id);
    await users.remove(request.actor, id);
    ownAccount(request, reply, id);
    return reply.code(204).send();
  });

  for (const action of ['suspend', 'activate'] as const) {
    app.post<WithId>(`/users/:id/${action}`, async (request, reply) => {
      const id = parseId(request.params.id);
      const user = await users[action](request.actor, id);
      ownAccount(request, reply, id);
      return sendPayload(reply, request.format, { kind: 'record', resource, record: presentUser(user) });
    });
  }

  app.post<WithId>('/users/:id/make_new_api_key', async (request, reply) => {
    const { user, apiKey } = await users.makeNewApiKey(request.actor, parseId(request.params.id), request.body);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: presentUser(user, { api_key: apiKey }) });
  });
  done();
};
