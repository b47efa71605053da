import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseId } from '../http/route-params.js';
import { type Actor, assertPermitted, may } from '../roles/authorization.js';
import { parsePagination } from '../shared/pagination.js';
import { Unprocessable } from '../shared/problems.js';
import type { UserGroup } from '../user-groups/user-group.js';
import { consoleRoute, type ConsoleServices, everyRecord, formOf, pageContext, sendPage } from './console-page.js';
import {
  confirmDeleteGroupPage, type GroupChoices, type GroupFormValues, groupPage, type GroupView, groupsListPage, newGroupPage,
} from './groups-pages.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

const PAGE_LIMITS = { defaultPerPage: 25, maxPerPage: 100 };
/** The members a group's page lists; the rest are in the users list, filtered by the group. */
const MEMBERS_SHOWN = 50;

const NOTICES: Record<string, string> = { created: 'Group created.', saved: 'Saved.', deleted: 'Group deleted.' };

const noticeOf = (query: WithId['Querystring']) => (typeof query.notice === 'string' ? NOTICES[query.notice] : undefined);

const valuesOf = (group: UserGroup): GroupFormValues => ({
  label: group.label, identifier: group.identifier, role_ids: group.roles.map((r) => r.id), bucket_id: group.bucket_id === null ? '' : String(group.bucket_id),
});

/**
 * The group form as the API's request body (user-groups/user-groups.service.ts reads and checks it).
 * The role picker's marker says the roles were on the form, so ticking none sends an empty list; a
 * form without the picker or the bucket select (a viewer who may not see roles or buckets) leaves them.
 */
function bodyOf(form: URLSearchParams): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of ['label', 'identifier', 'bucket_id']) {
    const value = form.get(name);
    if (value !== null) body[name] = value;
  }
  // An empty identifier on a new group: made from the label (the API's rule when it is left out).
  if (body.identifier === '') delete body.identifier;
  if (form.has('role_picker')) body.role_ids = form.getAll('role_ids');
  return body;
}

/** What the form showed, to show again after a 422. */
function typed(body: Record<string, unknown>): GroupFormValues {
  const ids = Array.isArray(body.role_ids) ? body.role_ids.map(Number).filter((id) => Number.isSafeInteger(id)) : undefined;
  return {
    label: body.label as string | undefined, identifier: body.identifier as string | undefined,
    ...(ids ? { role_ids: ids } : {}), ...(typeof body.bucket_id === 'string' ? { bucket_id: body.bucket_id } : {}),
  };
}

/** User groups (docs/console.md#user-groups): every action decided by user-groups/user-groups.service.ts, as for the API. */
export function consoleGroupsRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { userGroups, roles, buckets, users } = services;
  const see = (id: number, notice: string) => `/console/groups/${id}?notice=${notice}`;

  /** The buckets' labels by id, for a viewer who may see buckets (else none: ids are shown). */
  async function bucketLabels(viewer: Actor): Promise<Map<number, string>> {
    if (!may(viewer, 'buckets.read')) return new Map();
    return new Map((await everyRecord((limit, offset) => buckets.list(viewer, limit, offset))).map((b) => [b.id, b.label]));
  }

  /** The roles and buckets a group's form offers: those the viewer may see. */
  async function choices(viewer: Actor): Promise<GroupChoices> {
    const roleChoices = may(viewer, 'roles.read') ? await everyRecord((limit, offset) => roles.list(viewer, limit, offset)) : undefined;
    const bucketChoices = may(viewer, 'buckets.read') ? await everyRecord((limit, offset) => buckets.list(viewer, limit, offset)) : undefined;
    return { roleChoices, bucketChoices };
  }

  app.get<WithId>('/groups', consoleRoute(), async (request, reply) => {
    const pagination = parsePagination([], { page: request.query.page, per_page: request.query.per_page }, PAGE_LIMITS);
    const { items, total } = await userGroups.list(request.actor, pagination.perPage, pagination.offset);
    reply.header('x-total', String(total));
    const view = { groups: items, total, page: pagination.page, perPage: pagination.perPage, buckets: await bucketLabels(request.actor), notice: noticeOf(request.query) };
    return sendPage(reply, groupsListPage(pageContext(request, services), view));
  });

  app.get('/groups/new', consoleRoute(), async (request, reply) => {
    assertPermitted(request.actor, 'user_groups.create');
    return sendPage(reply, newGroupPage(pageContext(request, services), {}, {}, await choices(request.actor)));
  });

  app.post('/groups', consoleRoute(), async (request, reply) => {
    const body = bodyOf(formOf(request));
    try {
      const group = await userGroups.create(request.actor, body);
      return reply.code(303).header('location', see(group.id, 'created')).send();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return sendPage(reply, newGroupPage(pageContext(request, services), typed(body), error.messages, await choices(request.actor)), 422);
    }
  });

  async function show(request: FastifyRequest<WithId>, reply: FastifyReply, group: UserGroup, extra: Partial<GroupView> & { status?: number } = {}) {
    const viewer = request.actor;
    const listsUsers = may(viewer, 'users.read') || may(viewer, 'users.read.own');
    const members = listsUsers ? await users.groupMembers(viewer, group.id, MEMBERS_SHOWN, 0).then(({ items, total }) => ({ users: items, total })) : undefined;
    const offered = may(viewer, 'user_groups.update') ? await choices(viewer) : {};
    const view: GroupView = {
      group, values: valuesOf(group), errors: {}, buckets: await bucketLabels(viewer), members, notice: noticeOf(request.query), ...offered, ...extra,
    };
    return sendPage(reply, groupPage(pageContext(request, services), view), extra.status);
  }

  app.get<WithId>('/groups/:id', consoleRoute(), async (request, reply) => show(request, reply, await userGroups.get(request.actor, parseId(request.params.id))));

  app.post<WithId>('/groups/:id', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const body = bodyOf(formOf(request));
    try {
      await userGroups.update(request.actor, id, body);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const group = await userGroups.get(request.actor, id);
      return show(request, reply, group, { values: { ...valuesOf(group), ...typed(body) }, errors: error.messages, notice: undefined, status: 422 });
    }
    return reply.code(303).header('location', see(id, 'saved')).send();
  });

  app.get<WithId>('/groups/:id/delete', consoleRoute(), async (request, reply) => {
    assertPermitted(request.actor, 'user_groups.delete');
    const group = await userGroups.get(request.actor, parseId(request.params.id));
    return sendPage(reply, confirmDeleteGroupPage(pageContext(request, services), group));
  });

  /** A group users belong to: the API's refusal, said on the group's page (422). */
  app.post<WithId>('/groups/:id/delete', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    try {
      await userGroups.remove(request.actor, id);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const group = await userGroups.get(request.actor, id);
      return show(request, reply, group, { refusal: error.messages.base ?? Object.values(error.messages).flat(), notice: undefined, status: 422 });
    }
    return reply.code(303).header('location', '/console/groups?notice=deleted').send();
  });
}
