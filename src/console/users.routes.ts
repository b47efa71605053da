import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { assertPermitted, may } from '../roles/authorization.js';
import { Unprocessable } from '../shared/problems.js';
import type { User } from '../users/user.js';
import { clearConsoleCookie } from './console-session.js';
import { confirmDeleteUserPage, newUserPage, type UserFormValues, userPage, usersListPage } from './users-pages.js';
import { parsePagination } from '../shared/pagination.js';
import { parseId } from '../http/route-params.js';
import { consoleRoute, type ConsoleServices, formOf, pageContext, sendPage } from './console-page.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

const PAGE_LIMITS = { defaultPerPage: 25, maxPerPage: 100 };
const EDITED = ['login', 'email', 'first_name', 'last_name', 'time_zone', 'locale', 'role'] as const;

const NOTICES: Record<string, string> = {
  created: 'User created.',
  saved: 'Saved.',
  suspended: 'Suspended: the user can no longer sign in, and its sessions have ended.',
  activated: 'Activated.',
  deleted: 'User deleted.',
  removed: 'User removed.',
};

function valuesOf(user: User): UserFormValues {
  return { login: user.login, email: user.email, first_name: user.first_name, last_name: user.last_name, role: user.role, time_zone: user.time_zone ?? '', locale: user.locale ?? '' };
}

/** The fields a form sent, as the API's request body (users/users.service.ts reads and checks them). */
function bodyOf(form: URLSearchParams, names: readonly string[]): Record<string, string> {
  const body: Record<string, string> = {};
  for (const name of names) {
    const value = form.get(name);
    if (value !== null) body[name] = value;
  }
  return body;
}

const noticeOf = (query: WithId['Querystring']) => (typeof query.notice === 'string' ? NOTICES[query.notice] : undefined);

/** Users (docs/console.md#users): administrators manage everyone, a user its own account, by the API's rules. */
export function consoleUsersRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { users } = services;
  const actor = (request: FastifyRequest) => ({ id: request.viewer.id, permissions: request.viewer.permissions, address: request.ip });
  const see = (id: number, notice: string) => `/console/users/${id}?notice=${notice}`;

  app.get<WithId>('/users', consoleRoute(), async (request, reply) => {
    const pagination = parsePagination([], { page: request.query.page, per_page: request.query.per_page }, PAGE_LIMITS);
    const { items, total } = await users.list(request.viewer, pagination.perPage, pagination.offset);
    reply.header('x-total', String(total));
    return sendPage(reply, usersListPage(pageContext(request, services), { users: items, total, page: pagination.page, perPage: pagination.perPage, notice: noticeOf(request.query) }));
  });

  app.get('/users/new', consoleRoute(), (request, reply) => {
    assertPermitted(request.viewer, 'users.create');
    return sendPage(reply, newUserPage(pageContext(request, services), {}, {}));
  });

  app.post('/users', consoleRoute(), async (request, reply) => {
    const body = bodyOf(formOf(request), ['login', 'email', 'first_name', 'last_name', 'password', 'role']);
    try {
      const user = await users.create(request.viewer, body);
      return reply.code(303).header('location', see(user.id, 'created')).send();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      // The password is never written back into the page.
      delete body.password;
      return sendPage(reply, newUserPage(pageContext(request, services), body, error.messages), 422);
    }
  });

  async function show(request: FastifyRequest<WithId>, reply: FastifyReply, user: User, extra: Partial<Parameters<typeof userPage>[1]> & { status?: number } = {}) {
    const view = { user, values: valuesOf(user), errors: {}, passwordErrors: {}, notice: noticeOf(request.query), ...extra };
    return sendPage(reply, userPage(pageContext(request, services), view), extra.status);
  }

  app.get<WithId>('/users/:id', consoleRoute(), async (request, reply) => show(request, reply, await users.get(request.viewer, parseId(request.params.id))));

  app.post<WithId>('/users/:id', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const user = await users.get(request.viewer, id);
    const form = formOf(request);
    // Only a holder of users.update sends a role; the same rule as the API refuses anyone else's.
    const body = bodyOf(form, may(request.viewer, 'users.update') ? EDITED : EDITED.filter((name) => name !== 'role'));
    try {
      await users.update(actor(request), id, body);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return show(request, reply, user, { values: { ...valuesOf(user), ...body }, errors: error.messages, notice: undefined, status: 422 });
    }
    return reply.code(303).header('location', see(id, 'saved')).send();
  });

  app.post<WithId>('/users/:id/password', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const user = await users.get(request.viewer, id);
    const form = formOf(request);
    try {
      await users.update(actor(request), id, { password: form.get('password') ?? '', current_password: form.get('current_password') ?? '' });
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return show(request, reply, user, { passwordErrors: error.messages, notice: undefined, status: 422 });
    }
    // A new password ends every session of the user, this one too (docs/security.md).
    if (id === request.viewer.id) {
      clearConsoleCookie(request, reply);
      return reply.code(303).header('location', '/console/sign-in?password_changed=1').send();
    }
    return reply.code(303).header('location', see(id, 'saved')).send();
  });

  for (const action of ['suspend', 'activate'] as const) {
    app.post<WithId>(`/users/:id/${action}`, consoleRoute(), async (request, reply) => {
      const id = parseId(request.params.id);
      await users[action](request.viewer, id);
      return reply.code(303).header('location', see(id, action === 'suspend' ? 'suspended' : 'activated')).send();
    });
  }

  /** The new key is in this answer only: never cached, never in a URL. */
  app.post<WithId>('/users/:id/api-key', consoleRoute(), async (request, reply) => {
    const { user, apiKey } = await users.makeNewApiKey(request.viewer, parseId(request.params.id));
    reply.header('cache-control', 'no-store');
    return show(request, reply, user, { apiKey, notice: undefined });
  });

  app.get<WithId>('/users/:id/delete', consoleRoute(), async (request, reply) => {
    assertPermitted(request.viewer, 'users.delete');
    const user = await users.get(request.viewer, parseId(request.params.id));
    return sendPage(reply, confirmDeleteUserPage(pageContext(request, services), user));
  });

  app.post<WithId>('/users/:id/delete', consoleRoute(), async (request, reply) => {
    const outcome = await users.remove(request.viewer, parseId(request.params.id));
    return reply.code(303).header('location', `/console/users?notice=${outcome === 'marked' ? 'deleted' : 'removed'}`).send();
  });
}
