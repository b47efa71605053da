import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../../domain/authentication.js';
import { SESSION_COOKIE } from '../../domain/sessions.js';

/** `Secure` when the request came over TLS (X-Forwarded-Proto counts only with CMI_TRUST_PROXY). */
function cookieAttributes(request: FastifyRequest): string {
  return `path=/; HttpOnly; SameSite=Lax${request.protocol === 'https' ? '; Secure' : ''}`;
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=${token}; ${cookieAttributes(request)}`);
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=; Max-Age=0; ${cookieAttributes(request)}`);
}

/** Every request authenticates (Basic or the session cookie) before routing reaches a handler. */
export function registerAuthentication(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('session');
  app.addHook('onRequest', async (request, reply) => {
    const { authorization, cookie } = request.headers;
    const authenticated = await authenticator.authenticate({ authorization, cookie, address: request.ip });
    request.viewer = authenticated.user;
    request.session = authenticated.session;
    if (authenticated.sessionToken) setSessionCookie(request, reply, authenticated.sessionToken);
  });
}
