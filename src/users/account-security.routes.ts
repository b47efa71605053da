import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { lastAccessLogItemResource, loginValidationResource, presentAccessLogItem, presentLoginValidation } from './account-security.resource.js';
import type { AccountSecurityService } from './account-security.service.js';
import type { AccountUnlock } from './account-unlock.js';

type WithId = { Params: { id: string } };

export const ACCOUNT_SECURITY_ROUTES: readonly RouteSpec[] = [
  { method: 'DELETE', path: '/users/drop_all', summary: 'OnApp\'s drop_all: ends every session of every user at once, in every process (API keys and passwords keep working)', who: 'holders of users.update', formats: true, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: '/users/:id/sessions', summary: 'Ends every session of the user at once, in every process (its API keys and password keep working)', who: 'holders of users.update; a user for itself', formats: true, answers: { 204: { empty: true } } },
  { method: 'GET', path: '/users/:id/last_access_log', summary: 'A page of the user\'s sign-ins and refused sign-ins, oldest first (the latest 100 are kept)', who: 'holders of users.read; a user for itself', formats: true, paginated: true, answers: { 200: { list: lastAccessLogItemResource } } },
  {
    method: 'POST', path: '/users/validate_login', summary: 'Whether a login or email is free for a new user: valid and message', who: 'holders of users.create', formats: true,
    body: { root: 'tmp_holder', fields: [['login', 'string'], ['email', 'string']] },
    answers: { 200: { record: loginValidationResource } },
  },
  {
    method: 'POST', path: '/users/:id/unlock_account', summary: 'Ends the lockout of the user\'s name with the unlock_token the lock\'s mail carried (once); any other token is the same 422', who: 'anyone', formats: true,
    body: { root: 'tmp_holder', fields: [['unlock_token', 'string']], required: ['unlock_token'] },
    answers: { 204: { empty: true } },
  },
];

export interface AccountSecurityRoutesOptions {
  accountSecurity: AccountSecurityService;
  lists: ListSettings;
  accountUnlock: AccountUnlock;
}

/** Sessions and access history (docs/api.md#sessions-and-access-history); who may: users/account-security.service.ts. */
export const accountSecurityRoutes: FastifyPluginCallback<AccountSecurityRoutesOptions> = (app, { accountSecurity, lists, accountUnlock }, done) => {
  // OnApp's PHP wrapper sends DELETE with a body; it changes nothing here.
  app.delete('/users/drop_all', async (request, reply) => {
    await accountSecurity.endAllSessions(request.actor);
    // The caller's own session ended too: no cookie for it.
    reply.removeHeader('set-cookie');
    return reply.code(204).send();
  });

  app.delete<WithId>('/users/:id/sessions', async (request, reply) => {
    const id = parseId(request.params.id);
    await accountSecurity.endSessions(request.actor, id);
    if (id === request.actor.id) reply.removeHeader('set-cookie');
    return reply.code(204).send();
  });

  app.get<WithId>('/users/:id/last_access_log', { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Record<string, string | string[]>, lists);
    const { items, total } = await accountSecurity.lastAccessLog(request.actor, parseId(request.params.id), pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource: lastAccessLogItemResource, records: items.map(presentAccessLogItem) });
  });

  app.post('/users/validate_login', async (request, reply) => {
    const validation = await accountSecurity.validateLogin(request.actor, request.body);
    return sendPayload(reply, request.format, { kind: 'record', resource: loginValidationResource, record: presentLoginValidation(validation) });
  });
  // Public: the mailed token is the credential (docs/security.md#unlocking-by-mail).
  app.post<WithId>('/users/:id/unlock_account', { config: { public: true } }, async (request, reply) => {
    await accountUnlock.unlock(parseId(request.params.id), request.body, { address: request.ip, requestId: request.id });
    return reply.code(204).send();
  });
  done();
};
