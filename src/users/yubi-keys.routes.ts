import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { yubiKeyResource as resource } from './yubi-key.resource.js';
import type { YubiKeysService } from './yubi-keys.service.js';

type WithUser = { Params: { id: string } };
type WithKey = { Params: { id: string; key_id: string } };

export const YUBI_KEYS_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/users/:id/yubi_keys', summary: 'A page of the user\'s YubiKeys (each key\'s public id in otp; cmi never accepts a YubiKey OTP as a factor)', who: 'holders of users.read; a user for itself', formats: true, paginated: true, answers: { 200: { list: resource } } },
  {
    method: 'POST', path: '/users/:id/yubi_keys', summary: 'Records a YubiKey from an OTP it typed (only its public id is kept)', who: 'holders of users.update; a user for itself', formats: true, location: true,
    body: { root: 'yubi_key', fields: [['label', 'string'], ['otp', 'string']], required: ['otp'] },
    answers: { 201: { record: resource } },
  },
  { method: 'GET', path: '/users/:id/yubi_keys/:key_id', summary: 'One of the user\'s YubiKeys', who: 'holders of users.read; a user for itself', formats: true, answers: { 200: { record: resource } } },
  { method: 'DELETE', path: '/users/:id/yubi_keys/:key_id', summary: 'Forgets one of the user\'s YubiKeys', who: 'holders of users.update; a user for itself', formats: true, answers: { 204: { empty: true } } },
];

export interface YubiKeysRoutesOptions {
  yubiKeys: YubiKeysService;
  lists: ListSettings;
}

/** A user's YubiKeys as OnApp's PHP wrapper calls them (docs/api.md#yubikeys); who may: users/yubi-keys.service.ts. */
export const yubiKeysRoutes: FastifyPluginCallback<YubiKeysRoutesOptions> = (app, { yubiKeys, lists }, done) => {
  const location = (request: FastifyRequest, userId: number, keyId: number) => `/users/${userId}/yubi_keys/${keyId}.${request.format}`;

  app.get<WithUser>('/users/:id/yubi_keys', { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Record<string, string | string[]>, lists);
    const { items, total } = await yubiKeys.list(request.actor, parseId(request.params.id), pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
  });

  app.post<WithUser>('/users/:id/yubi_keys', async (request, reply) => {
    const userId = parseId(request.params.id);
    const key = await yubiKeys.create(request.actor, userId, request.body);
    reply.code(201).header('location', location(request, userId, key.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: key });
  });

  app.get<WithKey>('/users/:id/yubi_keys/:key_id', async (request, reply) => {
    const key = await yubiKeys.get(request.actor, parseId(request.params.id), parseId(request.params.key_id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: key });
  });

  app.delete<WithKey>('/users/:id/yubi_keys/:key_id', async (request, reply) => {
    await yubiKeys.remove(request.actor, parseId(request.params.id), parseId(request.params.key_id));
    return reply.code(204).send();
  });
  done();
};
