import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../../domain/authentication.js';
import { SESSION_COOKIE } from '../../domain/sessions.js';

/** Every request authenticates (Basic or the session cookie) before routing reaches a handler. */
export function registerAuthentication(app: FastifyInstance, authenticator: Authenticator): void {
  app.addHook('onRequest', async (request, reply) => {
    const { authorization, cookie } = request.headers;
    const authenticated = await authenticator.authenticate({ authorization, cookie });
    request.viewer = authenticated.user;
    if (authenticated.newSessionToken) {
      const secure = request.protocol === 'https' ? '; Secure' : '';
      reply.header('set-cookie', `${SESSION_COOKIE}=${authenticated.newSessionToken}; path=/; HttpOnly; SameSite=Lax${secure}`);
    }
  });
}
