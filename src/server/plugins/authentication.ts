import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticated, Authenticator } from '../../domain/authentication.js';
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

/**
 * Every request authenticates (Basic or the session cookie) before routing reaches a handler. A
 * credential verified moments ago is answered synchronously from the cache (the common case: clients
 * resend Basic auth on every request); anything else goes to the database.
 */
export function registerAuthentication(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('session');
  app.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config.public) return done();
    const { authorization, cookie } = request.headers;
    const credentials = { authorization, cookie, address: request.ip };
    const apply = (authenticated: Authenticated) => {
      request.viewer = authenticated.user;
      request.session = authenticated.session;
      if (authenticated.sessionToken) setSessionCookie(request, reply, authenticated.sessionToken);
    };
    const cached = authenticator.fromCache(credentials);
    if (cached) {
      apply(cached);
      return done();
    }
    authenticator.authenticate(credentials).then((authenticated) => {
      apply(authenticated);
      done();
    }, done);
  });
}
