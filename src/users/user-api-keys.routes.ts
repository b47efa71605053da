import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { generatedApiKeyResource, presentApiKey, userApiKeyResource as resource } from './user-api-key.resource.js';
import type { UsersService } from './users.service.js';

type WithUser = { Params: { id: string } };
type WithKey = { Params: { id: string; key_id: string } };

const WHO = 'holders of users.api_key; of users.api_key.own for itself';

export const USER_API_KEYS_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/users/:id/user_api_keys', summary: 'A page of the user\'s API keys (never a key)', who: WHO, formats: true, paginated: true, answers: { 200: { list: resource } } },
  {
    method: 'POST', path: '/users/:id/user_api_keys', summary: 'A new API key beside the user\'s others, shown once in api_key (through the session cookie, the body carries current_password)', who: WHO, formats: true, location: true,
    body: { root: 'user_api_key', fields: [['description', 'string'], ['current_password', 'string']], required: ['description'] },
    answers: { 201: { record: resource } },
  },
  {
    method: 'POST', path: '/users/:id/user_api_keys/generate', summary: 'OnApp\'s generate: a new API key beside the user\'s others, described "Generated through API by <login>", shown once', who: WHO, formats: true, location: true,
    body: { root: 'user_api_key', fields: [['description', 'string'], ['current_password', 'string']] },
    answers: { 201: { record: generatedApiKeyResource } },
  },
  { method: 'GET', path: '/users/:id/user_api_keys/:key_id', summary: 'One of the user\'s API keys (never the key)', who: WHO, formats: true, answers: { 200: { record: resource } } },
  { method: 'DELETE', path: '/users/:id/user_api_keys/:key_id', summary: 'Revokes the API key at once, in every process, and ends the user\'s sessions', who: WHO, formats: true, answers: { 204: { empty: true } } },
];

export interface UserApiKeysRoutesOptions {
  users: UsersService;
  lists: ListSettings;
}

/** A user's API keys as OnApp 6 has them (docs/api.md#api-keys); who may: users/users.service.ts. */
export const userApiKeysRoutes: FastifyPluginCallback<UserApiKeysRoutesOptions> = (app, { users, lists }, done) => {
  const location = (request: FastifyRequest, userId: number, keyId: number) => `/users/${userId}/user_api_keys/${keyId}.${request.format}`;

  app.get<WithUser>('/users/:id/user_api_keys', { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Record<string, string | string[]>, lists);
    const { items, total } = await users.listApiKeys(request.actor, parseId(request.params.id), pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items.map((key) => presentApiKey(key)) });
  });

  app.post<WithUser>('/users/:id/user_api_keys', async (request, reply) => {
    const userId = parseId(request.params.id);
    const { key, apiKey } = await users.createApiKey(request.actor, userId, request.body);
    reply.code(201).header('location', location(request, userId, key.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: presentApiKey(key, { api_key: apiKey }) });
  });

  app.post<WithUser>('/users/:id/user_api_keys/generate', async (request, reply) => {
    const userId = parseId(request.params.id);
    const { key, apiKey } = await users.createApiKey(request.actor, userId, request.body, `Generated through API by ${request.actor.login}`);
    reply.code(201).header('location', location(request, userId, key.id));
    return sendPayload(reply, request.format, { kind: 'record', resource: generatedApiKeyResource, record: { api_key: apiKey } });
  });

  app.get<WithKey>('/users/:id/user_api_keys/:key_id', async (request, reply) => {
    const key = await users.getApiKey(request.actor, parseId(request.params.id), parseId(request.params.key_id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: presentApiKey(key) });
  });

  app.delete<WithKey>('/users/:id/user_api_keys/:key_id', async (request, reply) => {
    const userId = parseId(request.params.id);
    await users.revokeApiKey(request.actor, userId, parseId(request.params.key_id));
    // The user's sessions ended: no cookie for one that just ended.
    if (userId === request.actor.id) reply.removeHeader('set-cookie');
    return reply.code(204).send();
  });
  done();
};
