import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import type { Clock } from '../shared/clock.js';
import type { Authenticator } from './authentication.js';
import { clearSessionCookie } from './session-cookie.js';

export const SESSION_ROUTES: readonly RouteSpec[] = [
  { method: 'DELETE', path: '/session', summary: 'Ends the cookie\'s session and clears the cookie', who: 'any user', formats: true, answers: { 204: { empty: true } } },
];

export const sessionRoutes: FastifyPluginCallback<{ authenticator: Authenticator; clock: Clock }> = (app, { authenticator, clock }, done) => {
  /** Logout: ends the session the cookie names (others of the user go on) and clears the cookie. */
  app.delete('/session', async (request, reply) => {
    if (request.session) await authenticator.endSession(request.session, clock(), request.actor);
    reply.removeHeader('set-cookie');
    clearSessionCookie(request, reply);
    return reply.code(204).send();
  });
  done();
};
