import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isBesideApi } from '../http/route-spec.js';
import { Forbidden } from '../shared/problems.js';
import type { User } from './user.js';

/** What the expiry check asks of the password policy (password-policy.service.ts). */
export interface PasswordExpiry {
  expired(user: Pick<User, 'password_changed_at'>): boolean;
}

/** The 403 of a request made with an expired password: what happened, and how to change it. */
export const expiredPasswordMessage = (userId: number): string =>
  `Your password has expired (the password policy's expiry_months): it is accepted only to change it, with PUT /users/${userId}.json ` +
  '{"user": {"password": "<new>", "current_password": "<current>"}}; API keys are not affected (docs/security.md#password-policy)';

const isText = (value: unknown): boolean => typeof value === 'string';

/** PUT /users/<its own id> carrying a new password and the current one: the one thing an expired password may do. */
function changesOwnPassword(request: FastifyRequest, user: User): boolean {
  if (request.method !== 'PUT' || request.routeOptions.url !== '/users/:id') return false;
  if ((request.params as { id?: string }).id !== String(user.id)) return false;
  const body = request.body as Record<string, unknown> | undefined;
  const fields = (body !== null && typeof body === 'object' && typeof body['user'] === 'object' && body['user'] !== null ? body['user'] : body) as Record<string, unknown> | undefined;
  return fields !== undefined && fields !== null && isText(fields['password']) && isText(fields['current_password']);
}

/**
 * An account whose password has expired under the password policy (docs/security.md#password-policy),
 * proving itself with that password (Basic) or a session begun with it, may only change it: any other
 * API request is refused 403 saying so (changesOwnPassword); signing out still works. API keys are not
 * affected. Checked before each API route's handler, once its body is read; the console sends such an
 * account to its change-password page instead (console/console.plugin.ts).
 */
export function registerPasswordExpiry(app: FastifyInstance, expiry: PasswordExpiry): void {
  const check = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    const { viewer, actor } = request;
    if (!viewer || !actor || actor.credential === 'api_key' || !expiry.expired(viewer)) return done();
    if (changesOwnPassword(request, viewer) || (request.method === 'DELETE' && request.routeOptions.url === '/session')) return done();
    done(new Forbidden(expiredPasswordMessage(viewer.id)));
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.public || isBesideApi(route.url)) return;
    const own = route.preHandler === undefined ? [] : [route.preHandler].flat();
    route.preHandler = [check, ...own];
  });
}

/**
 * Where the console sends an account whose password has expired (docs/console.md#password-expiry):
 * its own page, whose "Change my password" form is the one thing it may post (and sign out); nothing
 * else is shown until the password is changed. Undefined: the request goes on.
 */
export function consoleExpiryRedirect(request: FastifyRequest, user: User, expiry: PasswordExpiry): string | undefined {
  if (!expiry.expired(user)) return undefined;
  const own = `/console/users/${user.id}`;
  const path = request.url.split('?')[0];
  if ((request.method === 'GET' && path === own) || (request.method === 'POST' && (path === `${own}/password` || path === '/console/sign-out'))) return undefined;
  return `${own}?notice=password_expired`;
}
