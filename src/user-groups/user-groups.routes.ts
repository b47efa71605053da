import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { presentUserGroup, userGroupResource as resource } from './user-group.resource.js';
import type { UserGroupsService } from './user-groups.service.js';

type WithId = { Params: { id: string } };

const GROUPS = '/user_groups';
const GROUP_BODY = {
  root: 'user_group',
  fields: [['label', 'string'], ['identifier', 'string'], ['role_ids', 'id[]'], ['role_id', 'integer'], ['bucket_id', 'integer'], ['bucket_ids', 'id[]']],
} as const;

export const USER_GROUPS_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: GROUPS, summary: 'A page of user groups, with their roles', who: 'holders of user_groups.read', formats: true, paginated: true, answers: { 200: { list: resource } } },
  { method: 'POST', path: GROUPS, summary: 'Creates a user group (identifier: made from the label when not given)', who: 'holders of user_groups.create', formats: true, location: true, body: { ...GROUP_BODY, required: ['label'] }, answers: { 201: { record: resource } } },
  { method: 'GET', path: `${GROUPS}/:id`, summary: 'One user group', who: 'holders of user_groups.read', formats: true, answers: { 200: { record: resource } } },
  { method: 'PUT', path: `${GROUPS}/:id`, summary: 'Changes the fields the body names; role_ids replace the group\'s roles', who: 'holders of user_groups.update', formats: true, body: GROUP_BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: `${GROUPS}/:id`, summary: 'Deletes a user group no user belongs to', who: 'holders of user_groups.delete', formats: true, answers: { 204: { empty: true } } },
];

export interface UserGroupsRoutesOptions {
  userGroups: UserGroupsService;
  lists: ListSettings;
}

/** OnApp's user groups (docs/api.md#user-groups); who may do what: user-groups/user-groups.service.ts. The users of a group: users/users.routes.ts. */
export const userGroupsRoutes: FastifyPluginCallback<UserGroupsRoutesOptions> = (app, { userGroups, lists }, done) => {
  app.get(GROUPS, { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Record<string, string | string[]>, lists);
    const { items, total } = await userGroups.list(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items.map(presentUserGroup) });
  });

  app.post(GROUPS, async (request, reply) => {
    const group = await userGroups.create(request.actor, request.body);
    reply.code(201).header('location', `${GROUPS}/${group.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: presentUserGroup(group) });
  });

  app.get<WithId>(`${GROUPS}/:id`, async (request, reply) => {
    const group = await userGroups.get(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: presentUserGroup(group) });
  });

  app.put<WithId>(`${GROUPS}/:id`, async (request, reply) => {
    await userGroups.update(request.actor, parseId(request.params.id), request.body);
    return reply.code(204).send();
  });

  app.delete<WithId>(`${GROUPS}/:id`, async (request, reply) => {
    await userGroups.remove(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });
  done();
};
