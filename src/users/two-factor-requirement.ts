import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isBesideApi } from '../http/route-spec.js';
import { Forbidden } from '../shared/problems.js';
import type { User } from './user.js';

/** The 403 of a request by a holder of a role requiring a second factor that has none: what happened, and how to enrol. */
export const twoFactorRequiredMessage = (userId: number): string =>
  `A role of this account requires a second factor: enrol at /users/${userId}/two_factor.json (POST, then PUT the code to confirm), ` +
  'then use an API key or the console (docs/security.md#second-factor)';

/** Whether `user` must enrol before anything else: a role of its own or of its group requires a factor it does not have. */
export const mustEnrol = (user: Pick<User, 'two_factor_required' | 'totp_enabled'>): boolean => user.two_factor_required && !user.totp_enabled;

/** The requests an account that must enrol may still make: its own two_factor endpoints (enrol, confirm, show) and signing out. */
function enrols(request: FastifyRequest, user: User): boolean {
  const route = request.routeOptions.url;
  if (request.method === 'DELETE' && route === '/session') return true;
  if (route !== '/users/:id/two_factor' || !['GET', 'POST', 'PUT'].includes(request.method)) return false;
  return (request.params as { id?: string }).id === String(user.id);
}

/**
 * A holder of a role that requires a second factor (docs/security.md#second-factor), directly or
 * through its user group, without a confirmed one may only enrol: every other API request is refused
 * 403 saying so, whatever the credential (password, the session its password began, or an API key:
 * a key does not stand in for a factor the role requires). Checked before each API route's handler;
 * the console sends such an account to its enrolment page instead (consoleEnrolmentRedirect).
 */
export function registerTwoFactorRequirement(app: FastifyInstance): void {
  const check = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    const { viewer, actor } = request;
    if (!viewer || !actor || !mustEnrol(viewer) || enrols(request, viewer)) return done();
    done(new Forbidden(twoFactorRequiredMessage(viewer.id)));
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.public || isBesideApi(route.url)) return;
    const own = route.preHandler === undefined ? [] : [route.preHandler].flat();
    route.preHandler = [check, ...own];
  });
}

/**
 * Where the console sends an account that must enrol (docs/console.md#second-factor-required): its own
 * user page, whose "Second factor" section enrols; nothing else is shown until it has, and the enrolment
 * and signing out go on.
 * Undefined: the request goes on.
 */
export function consoleEnrolmentRedirect(request: FastifyRequest, user: User): string | undefined {
  if (!mustEnrol(user)) return undefined;
  const own = `/console/users/${user.id}`;
  const path = request.url.split('?')[0];
  if (request.method === 'GET' && path === own) return undefined;
  if (request.method === 'POST' && [`${own}/two-factor`, `${own}/two-factor/confirm`, '/console/sign-out'].includes(path as string)) return undefined;
  return `${own}?notice=two_factor_required`;
}
