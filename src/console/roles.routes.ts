import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseId } from '../http/route-params.js';
import { assertPermitted } from '../roles/authorization.js';
import type { Role } from '../roles/role.js';
import { parsePagination } from '../shared/pagination.js';
import { Unprocessable } from '../shared/problems.js';
import { consoleRoute, type ConsoleServices, formOf, pageContext, sendPage } from './console-page.js';
import { confirmDeleteRolePage, newRolePage, type RoleFormValues, rolePage, rolesListPage } from './roles-pages.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

const PAGE_LIMITS = { defaultPerPage: 25, maxPerPage: 100 };

const NOTICES: Record<string, string> = {
  created: 'Role created.',
  cloned: 'Role cloned: this is the copy.',
  saved: 'Saved.',
  deleted: 'Role deleted.',
};

const noticeOf = (query: WithId['Querystring']) => (typeof query.notice === 'string' ? NOTICES[query.notice] : undefined);

const valuesOf = (role: Role): RoleFormValues => ({ label: role.label, identifier: role.identifier, permission_ids: role.permissions.map((p) => p.id) });

/**
 * The role form as the API's request body (roles/roles.service.ts reads and checks it). The picker's
 * marker says the permissions were on the form, so ticking none sends an empty list; a disabled
 * picker (the admin role's) sends neither, and a read-only identifier (a system role's) is sent unchanged.
 */
function bodyOf(form: URLSearchParams): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of ['label', 'identifier']) {
    const value = form.get(name);
    if (value !== null) body[name] = value;
  }
  // An empty identifier on a new role: made from the label (the API's rule when it is left out).
  if (body.identifier === '') delete body.identifier;
  if (form.has('permission_picker')) body.permission_ids = form.getAll('permission_ids');
  return body;
}

/** What the form showed, to show again after a 422 (ids the form sent that name nothing are dropped). */
function typed(body: Record<string, unknown>): RoleFormValues {
  const ids = Array.isArray(body.permission_ids) ? body.permission_ids.map(Number).filter((id) => Number.isSafeInteger(id)) : undefined;
  return { label: body.label as string | undefined, identifier: body.identifier as string | undefined, ...(ids ? { permission_ids: ids } : {}) };
}

/** Roles (docs/console.md#roles): every action decided by roles/roles.service.ts, as for the API. */
export function consoleRolesRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { roles } = services;
  const see = (id: number, notice: string) => `/console/roles/${id}?notice=${notice}`;

  app.get<WithId>('/roles', consoleRoute(), async (request, reply) => {
    const pagination = parsePagination([], { page: request.query.page, per_page: request.query.per_page }, PAGE_LIMITS);
    const { items, total } = await roles.list(request.actor, pagination.perPage, pagination.offset);
    reply.header('x-total', String(total));
    return sendPage(reply, rolesListPage(pageContext(request, services), { roles: items, total, page: pagination.page, perPage: pagination.perPage, notice: noticeOf(request.query) }));
  });

  app.get('/roles/new', consoleRoute(), (request, reply) => {
    assertPermitted(request.actor, 'roles.create');
    return sendPage(reply, newRolePage(pageContext(request, services), {}, {}));
  });

  app.post('/roles', consoleRoute(), async (request, reply) => {
    const body = bodyOf(formOf(request));
    try {
      const role = await roles.create(request.actor, body);
      return reply.code(303).header('location', see(role.id, 'created')).send();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return sendPage(reply, newRolePage(pageContext(request, services), typed(body), error.messages), 422);
    }
  });

  async function show(request: FastifyRequest<WithId>, reply: FastifyReply, role: Role, extra: Partial<Parameters<typeof rolePage>[1]> & { status?: number } = {}) {
    const view = { role, values: valuesOf(role), errors: {}, notice: noticeOf(request.query), ...extra };
    return sendPage(reply, rolePage(pageContext(request, services), view), extra.status);
  }

  app.get<WithId>('/roles/:id', consoleRoute(), async (request, reply) => show(request, reply, await roles.get(request.actor, parseId(request.params.id))));

  app.post<WithId>('/roles/:id', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const body = bodyOf(formOf(request));
    try {
      await roles.update(request.actor, id, body);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const role = await roles.get(request.actor, id);
      return show(request, reply, role, { values: { ...valuesOf(role), ...typed(body) }, errors: error.messages, notice: undefined, status: 422 });
    }
    return reply.code(303).header('location', see(id, 'saved')).send();
  });

  app.post<WithId>('/roles/:id/clone', consoleRoute(), async (request, reply) => {
    const copy = await roles.clone(request.actor, parseId(request.params.id));
    return reply.code(303).header('location', see(copy.id, 'cloned')).send();
  });

  app.get<WithId>('/roles/:id/delete', consoleRoute(), async (request, reply) => {
    assertPermitted(request.actor, 'roles.delete');
    const role = await roles.get(request.actor, parseId(request.params.id));
    if (role.system) return show(request, reply, role, { refusal: ['A system role cannot be deleted.'], notice: undefined, status: 422 });
    return sendPage(reply, confirmDeleteRolePage(pageContext(request, services), role));
  });

  /** System roles and roles users hold: the API's refusal, said on the role's page (422). */
  app.post<WithId>('/roles/:id/delete', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    try {
      await roles.remove(request.actor, id);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const role = await roles.get(request.actor, id);
      return show(request, reply, role, { refusal: error.messages.base ?? Object.values(error.messages).flat(), notice: undefined, status: 422 });
    }
    return reply.code(303).header('location', '/console/roles?notice=deleted').send();
  });
}
