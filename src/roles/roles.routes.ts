import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { permissionResource, roleResource as resource } from './role.resource.js';
import type { RolesService } from './roles.service.js';

type WithId = { Params: { id: string } };

const ROLE_BODY = { root: 'role', fields: [['label', 'string'], ['identifier', 'string'], ['permission_ids', 'id[]'], ['requires_two_factor', 'boolean']] } as const;

export const ROLES_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/roles', summary: 'A page of roles, with their permissions', who: 'holders of roles.read', formats: true, paginated: true, answers: { 200: { list: resource } } },
  { method: 'POST', path: '/roles', summary: 'Creates a role', who: 'holders of roles.create', formats: true, location: true, body: { ...ROLE_BODY, required: ['label'] }, answers: { 201: { record: resource } } },
  { method: 'GET', path: '/roles/:id', summary: 'One role', who: 'holders of roles.read', formats: true, answers: { 200: { record: resource } } },
  { method: 'PUT', path: '/roles/:id', summary: 'Changes the fields the body names; permission_ids replace the role\'s', who: 'holders of roles.update', formats: true, body: ROLE_BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: '/roles/:id', summary: 'Deletes a role that is no system role and that no user holds', who: 'holders of roles.delete', formats: true, answers: { 204: { empty: true } } },
  { method: 'POST', path: '/roles/:id/clone', summary: 'A new role with the label and permissions of this one', who: 'holders of roles.create', formats: true, location: true, answers: { 201: { record: resource } } },
  { method: 'GET', path: '/permissions', summary: 'The permission catalogue', who: 'holders of roles.read', formats: true, paginated: true, answers: { 200: { list: permissionResource } } },
];

export interface RolesRoutesOptions {
  roles: RolesService;
  lists: ListSettings;
}

/** OnApp's roles and permissions (docs/api.md#roles); who may do what: roles/roles.service.ts. */
export const rolesRoutes: FastifyPluginCallback<RolesRoutesOptions> = (app, { roles, lists }, done) => {
  const pageOf = (request: FastifyRequest) => parsePagination(request.requestPath.pagination, request.query as Record<string, string | string[]>, lists);

  app.get('/roles', { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await roles.list(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
  });

  app.post('/roles', async (request, reply) => {
    const role = await roles.create(request.actor, request.body);
    reply.code(201).header('location', `/roles/${role.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: role });
  });

  app.get<WithId>('/roles/:id', async (request, reply) => {
    const role = await roles.get(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: role });
  });

  app.put<WithId>('/roles/:id', async (request, reply) => {
    await roles.update(request.actor, parseId(request.params.id), request.body);
    return reply.code(204).send();
  });

  app.delete<WithId>('/roles/:id', async (request, reply) => {
    await roles.remove(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });

  app.post<WithId>('/roles/:id/clone', async (request, reply) => {
    const role = await roles.clone(request.actor, parseId(request.params.id));
    reply.code(201).header('location', `/roles/${role.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: role });
  });

  app.get('/permissions', { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await roles.permissions(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource: permissionResource, records: items });
  });
  done();
};
