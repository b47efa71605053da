import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app/context.js';
import { clearSessionCookie } from './session-cookie.js';

export function sessionRoutes(app: FastifyInstance, { authenticator, clock }: AppContext): void {
  /** Logout: ends the session the cookie names (others of the user go on) and clears the cookie. */
  app.delete('/session', async (request, reply) => {
    if (request.session) await authenticator.endSession(request.session, clock());
    reply.removeHeader('set-cookie');
    clearSessionCookie(request, reply);
    return reply.code(204).send();
  });
}
