import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Actor, assertPermitted, may, mayOnUser } from '../roles/authorization.js';
import { NotFound, Unprocessable } from '../shared/problems.js';
import type { User } from '../users/user.js';
import { parseUserListQuery } from '../users/users-query.js';
import type { UserFilters } from '../users/users.store.js';
import { clearConsoleCookie } from './console-session.js';
import {
  confirmDeleteUserPage, newUserPage, USER_FILTERS, type UserFilterValues, type UserFormValues, userPage, type UserView, usersListPage, usersListUrl,
} from './users-pages.js';
import { apiKeyLimits } from '../shared/limits.js';
import { whiteListLimits } from '../users/user-white-lists.service.js';
import { parsePagination } from '../shared/pagination.js';
import { parseId } from '../http/route-params.js';
import { twoFactorEnrolmentPage } from './two-factor-section.js';
import { consoleRoute, type ConsoleServices, everyRecord, formOf, pageContext, sendPage } from './console-page.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

/** Sign-ins a user's page shows, the latest first (the API pages the whole log). */
const ACCESS_LOG_ON_PAGE = 20;
const PAGE_LIMITS = { defaultPerPage: 25, maxPerPage: 100 };
const EDITED = ['login', 'email', 'first_name', 'last_name', 'time_zone', 'locale', 'role', 'bucket_id', 'user_group_id'] as const;

const NOTICES: Record<string, string> = {
  created: 'User created.',
  saved: 'Saved.',
  suspended: 'Suspended: the user can no longer sign in, and its sessions have ended.',
  activated: 'Activated.',
  sessions_ended: 'Every session of the user has ended: its browsers and API cookies sign in again (its password and API keys keep working).',
  key_revoked: 'API key revoked: it no longer works, and the user\'s sessions have ended.',
  address_allowed: 'Address allowed: from now on, every other address is refused.',
  address_removed: 'Allowed address removed.',
  deleted: 'User deleted.',
  removed: 'User removed.',
  password_expired: 'Your password has expired: change it below to go on (docs/security.md#password-policy).',
  two_factor_required: 'A role of yours requires a second factor: set one up under "Second factor" below (docs/security.md#second-factor); until then nothing else opens.',
  two_factor_enabled: 'Second factor on: from now on, signing in asks for a code of your authenticator app after the password.',
  two_factor_disabled: 'Second factor turned off: the password alone signs in.',
};

function valuesOf(user: User): UserFormValues {
  return {
    login: user.login, email: user.email, first_name: user.first_name, last_name: user.last_name, role: user.role, time_zone: user.time_zone ?? '', locale: user.locale ?? '',
    role_ids: user.roles.map((role) => role.id), bucket_id: user.bucket_id === null ? '' : String(user.bucket_id),
    user_group_id: user.user_group_id === null ? '' : String(user.user_group_id),
  };
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

/** The filters the URL gives (empty fields of the form are no filter). */
function filtersOf(query: WithId['Querystring']): UserFilterValues {
  const filters: UserFilterValues = {};
  for (const name of USER_FILTERS) {
    const value = query[name];
    if (typeof value === 'string' && value !== '') filters[name] = value;
  }
  return filters;
}

/** The filters as the users service takes them, or what is wrong with them (a URL edited by hand), by the API's rules. */
function readFilters(filters: UserFilterValues): { read: UserFilters; errors: Record<string, string[]> } {
  try {
    return { read: parseUserListQuery(filters), errors: {} };
  } catch (error) {
    if (error instanceof Unprocessable) return { read: {}, errors: error.messages };
    throw error;
  }
}

/** Users (docs/console.md#users): administrators manage everyone, a user its own account, by the API's rules. */
export function consoleUsersRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { users, roles, buckets, userGroups, whiteLists, twoFactor } = services;
  const see = (id: number, notice: string) => `/console/users/${id}?notice=${notice}`;

  app.get<WithId>('/users', consoleRoute(), async (request, reply) => {
    const query = request.query;
    const filters = filtersOf(query);
    // A search form sends its empty fields too: the URL to keep (and share) is the one without them.
    if (Object.values(query).some((value) => value === '')) return reply.code(303).header('location', usersListUrl(filters)).send();
    const pagination = parsePagination([], { page: query.page, per_page: query.per_page }, PAGE_LIMITS);
    const { read, errors } = readFilters(filters);
    const { items, total } = Object.keys(errors).length > 0 ? { items: [], total: 0 } : await users.list(request.actor, pagination.perPage, pagination.offset, read);
    const roleChoices = may(request.actor, 'users.read') && may(request.actor, 'roles.read') ? await everyRecord((limit, offset) => roles.list(request.actor, limit, offset)) : undefined;
    const groupChoices = may(request.actor, 'users.read') && may(request.actor, 'user_groups.read') ? await everyRecord((limit, offset) => userGroups.list(request.actor, limit, offset)) : undefined;
    reply.header('x-total', String(total));
    const view = { users: items, total, page: pagination.page, perPage: pagination.perPage, filters, filterErrors: errors, roleChoices, groupChoices, notice: noticeOf(query) };
    return sendPage(reply, usersListPage(pageContext(request, services), view), Object.keys(errors).length > 0 ? 422 : 200);
  });

  app.get('/users/new', consoleRoute(), (request, reply) => {
    assertPermitted(request.actor, 'users.create');
    return sendPage(reply, newUserPage(pageContext(request, services), {}, {}));
  });

  app.post('/users', consoleRoute(), async (request, reply) => {
    const body = bodyOf(formOf(request), ['login', 'email', 'first_name', 'last_name', 'password', 'role']);
    try {
      const user = await users.create(request.actor, body);
      return reply.code(303).header('location', see(user.id, 'created')).send();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      // The password is never written back into the page.
      delete body.password;
      return sendPage(reply, newUserPage(pageContext(request, services), body, error.messages), 422);
    }
  });

  /**
   * What the user's page shows beyond the record: the roles and buckets a holder of users.update may
   * pick from (when it may also see them), and the user's bucket by label (docs/console.md#users).
   */
  async function choices(viewer: Actor, user: User): Promise<Pick<UserView, 'roleChoices' | 'bucketChoices' | 'bucket' | 'groupChoices' | 'group'>> {
    const picks = may(viewer, 'users.update');
    const roleChoices = picks && may(viewer, 'roles.read') ? await everyRecord((limit, offset) => roles.list(viewer, limit, offset)) : undefined;
    const seesBuckets = may(viewer, 'buckets.read');
    const bucketChoices = picks && seesBuckets ? await everyRecord((limit, offset) => buckets.list(viewer, limit, offset)) : undefined;
    const bucket = user.bucket_id === null || !seesBuckets ? undefined
      : (bucketChoices?.find((b) => b.id === user.bucket_id) ?? (await buckets.get(viewer, user.bucket_id).catch(() => undefined)));
    const seesGroups = may(viewer, 'user_groups.read');
    const groupChoices = picks && seesGroups ? await everyRecord((limit, offset) => userGroups.list(viewer, limit, offset)) : undefined;
    const group = user.user_group_id === null || !seesGroups ? undefined
      : (groupChoices?.find((g) => g.id === user.user_group_id) ?? (await userGroups.get(viewer, user.user_group_id).catch(() => undefined)));
    return { roleChoices, bucketChoices, bucket, groupChoices, group };
  }

  /** The user's latest sign-ins (docs/console.md#users), when the viewer may read them. */
  async function accessLogOf(viewer: Actor, user: User) {
    if (services.accountSecurity === undefined || !mayOnUser(viewer, 'users.read', user.id)) return undefined;
    return services.accountSecurity.latestAccess(viewer, user.id, ACCESS_LOG_ON_PAGE);
  }

  /** Every API key of the user (at most apiKeyLimits.perUser), when the viewer may manage them. */
  async function apiKeysOf(viewer: Actor, user: User) {
    if (!mayOnUser(viewer, 'users.api_key', user.id)) return undefined;
    return (await users.listApiKeys(viewer, user.id, apiKeyLimits.perUser, 0)).items;
  }

  /** The user's allowed addresses (at most whiteListLimits.perUser), when the viewer may read them. */
  async function allowedAddressesOf(viewer: Actor, user: User) {
    if (!mayOnUser(viewer, 'users.read', user.id)) return undefined;
    return { entries: (await whiteLists.list(viewer, user.id, whiteListLimits.perUser, 0)).items, mayChange: may(viewer, 'users.update') };
  }

  /** The user's second factor, for the user itself and holders of users.read (never its secret). */
  async function twoFactorOf(viewer: Actor, user: User) {
    if (!mayOnUser(viewer, 'users.read', user.id)) return undefined;
    return { status: await twoFactor.status(viewer, user.id), mayTurnOff: may(viewer, 'users.update') };
  }

  async function show(request: FastifyRequest<WithId>, reply: FastifyReply, user: User, extra: Partial<Parameters<typeof userPage>[1]> & { status?: number } = {}) {
    const view = {
      user, values: valuesOf(user), errors: {}, passwordErrors: {}, notice: noticeOf(request.query),
      ...(await choices(request.actor, user)), apiKeys: await apiKeysOf(request.actor, user), allowedAddresses: await allowedAddressesOf(request.actor, user), twoFactor: await twoFactorOf(request.actor, user), accessLog: await accessLogOf(request.actor, user),
      mayEndSessions: services.accountSecurity !== undefined && mayOnUser(request.actor, 'users.update', user.id), ...extra,
    };
    return sendPage(reply, userPage(pageContext(request, services), view), extra.status);
  }

  app.get<WithId>('/users/:id', consoleRoute(), async (request, reply) => show(request, reply, await users.get(request.actor, parseId(request.params.id))));

  app.post<WithId>('/users/:id', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const user = await users.get(request.actor, id);
    const form = formOf(request);
    // Only a holder of users.update sends roles, a bucket and a group; the same rule as the API refuses anyone else's.
    const picks = may(request.actor, 'users.update');
    const body: Record<string, unknown> = bodyOf(form, picks ? EDITED : EDITED.filter((name) => name !== 'role' && name !== 'bucket_id' && name !== 'user_group_id'));
    // The form sends the login and the email every time: only a new one is a change, and only a
    // change of either needs the current password (docs/security.md#self-service).
    if (body.login === user.login) delete body.login;
    if (body.email === user.email) delete body.email;
    if (body.login !== undefined || body.email !== undefined) body.current_password = form.get('current_password') ?? '';
    // The role picker's marker: ticking none sends an empty list (which the API refuses, said beside it).
    if (picks && form.has('role_picker')) {
      body.role_ids = form.getAll('role_ids');
      delete body.role;
    }
    try {
      await users.update(request.actor, id, body);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      delete body.current_password;
      const typed: UserFormValues = { ...valuesOf(user), ...(body as UserFormValues), ...(Array.isArray(body.role_ids) ? { role_ids: body.role_ids.map(Number) } : {}) };
      return show(request, reply, user, { values: typed, errors: error.messages, notice: undefined, status: 422 });
    }
    return reply.code(303).header('location', see(id, 'saved')).send();
  });

  app.post<WithId>('/users/:id/password', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const user = await users.get(request.actor, id);
    const form = formOf(request);
    try {
      await users.update(request.actor, id, { password: form.get('password') ?? '', current_password: form.get('current_password') ?? '' });
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return show(request, reply, user, { passwordErrors: error.messages, notice: undefined, status: 422 });
    }
    // A new password ends every session of the user, this one too (docs/security.md).
    if (id === request.actor.id) {
      clearConsoleCookie(request, reply);
      return reply.code(303).header('location', '/console/sign-in?password_changed=1').send();
    }
    return reply.code(303).header('location', see(id, 'saved')).send();
  });

  for (const action of ['suspend', 'activate'] as const) {
    app.post<WithId>(`/users/:id/${action}`, consoleRoute(), async (request, reply) => {
      const id = parseId(request.params.id);
      await users[action](request.actor, id);
      return reply.code(303).header('location', see(id, action === 'suspend' ? 'suspended' : 'activated')).send();
    });
  }

  // Every session of the user ends at once, in every process (docs/security.md#ending-sessions); one's
  // own too, this one with them: then the sign-in page.
  app.post<WithId>('/users/:id/sessions/end', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    if (services.accountSecurity === undefined) throw new NotFound();
    await services.accountSecurity.endSessions(request.actor, id);
    if (id !== request.actor.id) return reply.code(303).header('location', see(id, 'sessions_ended')).send();
    clearConsoleCookie(request, reply);
    return reply.code(303).header('location', '/console/sign-in?ended=1').send();
  });

  /** The new key is in this answer only: never cached, never in a URL. */
  app.post<WithId>('/users/:id/api-key', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    let made: Awaited<ReturnType<typeof users.makeNewApiKey>>;
    try {
      made = await users.makeNewApiKey(request.actor, id, { current_password: formOf(request).get('current_password') ?? '' });
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return show(request, reply, await users.get(request.actor, id), { newKeyErrors: error.messages, notice: undefined, status: 422 });
    }
    const { user, apiKey } = made;
    reply.header('cache-control', 'no-store');
    return show(request, reply, user, { apiKey, notice: undefined });
  });

  /** A named key beside the others: shown in this answer only, like the default one. */
  app.post<WithId>('/users/:id/api-keys', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const user = await users.get(request.actor, id);
    let created: Awaited<ReturnType<typeof users.createApiKey>>;
    try {
      const form = formOf(request);
      created = await users.createApiKey(request.actor, id, { description: form.get('description') ?? '', current_password: form.get('current_password') ?? '' });
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return show(request, reply, user, { apiKeyErrors: error.messages, notice: undefined, status: 422 });
    }
    reply.header('cache-control', 'no-store');
    return show(request, reply, user, { apiKey: created.apiKey, apiKeyAdded: true, notice: undefined });
  });

  app.post<{ Params: { id: string; key_id: string } }>('/users/:id/api-keys/:key_id/revoke', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    await users.revokeApiKey(request.actor, id, parseId(request.params.key_id));
    // Revoking ends the user's sessions: one's own ends this one too (docs/security.md).
    if (id === request.actor.id) {
      clearConsoleCookie(request, reply);
      return reply.code(303).header('location', '/console/sign-in').send();
    }
    return reply.code(303).header('location', see(id, 'key_revoked')).send();
  });

  /** Allows an address or range (docs/security.md#allowed-addresses): the service decides who may. */
  app.post<WithId>('/users/:id/allowed-addresses', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const user = await users.get(request.actor, id);
    const form = formOf(request);
    const typed = { ip: form.get('ip') ?? '', description: form.get('description') ?? '' };
    try {
      await whiteLists.create(request.actor, id, typed);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const shown = await allowedAddressesOf(request.actor, user);
      return show(request, reply, user, { notice: undefined, status: 422, ...(shown ? { allowedAddresses: { ...shown, errors: error.messages, typed } } : {}) });
    }
    return reply.code(303).header('location', see(id, 'address_allowed')).send();
  });

  app.post<{ Params: { id: string; entry_id: string } }>('/users/:id/allowed-addresses/:entry_id/remove', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    await whiteLists.remove(request.actor, id, parseId(request.params.entry_id));
    return reply.code(303).header('location', see(id, 'address_removed')).send();
  });

  /**
   * Sets up the viewer's own second factor (docs/console.md#second-factor): the QR code, the key and the
   * recovery codes in this answer only (never cached, as no console page is), with the form confirming a first code.
   */
  app.post<WithId>('/users/:id/two-factor', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const user = await users.get(request.actor, id);
    let enrolment: Awaited<ReturnType<typeof twoFactor.enrol>>;
    try {
      enrolment = await twoFactor.enrol(request.actor, id, { current_password: formOf(request).get('current_password') ?? '' });
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const shown = await twoFactorOf(request.actor, user);
      return show(request, reply, user, { notice: undefined, status: 422, ...(shown ? { twoFactor: { ...shown, errors: error.messages } } : {}) });
    }
    return sendPage(reply, twoFactorEnrolmentPage(pageContext(request, services), user, enrolment, {}));
  });

  app.post<WithId>('/users/:id/two-factor/confirm', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const user = await users.get(request.actor, id);
    try {
      await twoFactor.confirm(request.actor, id, { two_factor: { code: formOf(request).get('code') ?? '' } });
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return sendPage(reply, twoFactorEnrolmentPage(pageContext(request, services), user, undefined, error.messages), 422);
    }
    return reply.code(303).header('location', see(id, 'two_factor_enabled')).send();
  });

  /** Turns a second factor off: one's own with a current code (or a recovery code), another's as a holder of users.update. */
  app.post<WithId>('/users/:id/two-factor/disable', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const user = await users.get(request.actor, id);
    const code = id === request.actor.id ? (formOf(request).get('code') ?? '') : undefined;
    try {
      await twoFactor.disable(request.actor, id, code);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const shown = await twoFactorOf(request.actor, user);
      return show(request, reply, user, { notice: undefined, status: 422, ...(shown ? { twoFactor: { ...shown, errors: error.messages } } : {}) });
    }
    return reply.code(303).header('location', see(id, 'two_factor_disabled')).send();
  });

  app.get<WithId>('/users/:id/delete', consoleRoute(), async (request, reply) => {
    assertPermitted(request.actor, 'users.delete');
    const user = await users.get(request.actor, parseId(request.params.id));
    return sendPage(reply, confirmDeleteUserPage(pageContext(request, services), user));
  });

  app.post<WithId>('/users/:id/delete', consoleRoute(), async (request, reply) => {
    const outcome = await users.remove(request.actor, parseId(request.params.id));
    return reply.code(303).header('location', `/console/users?notice=${outcome === 'marked' ? 'deleted' : 'removed'}`).send();
  });
}
