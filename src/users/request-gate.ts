import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticated, Authenticator } from './authentication.js';
import { DuplicateCredentials, Forbidden, NotAcceptable, NotFound } from '../shared/problems.js';
import { setSessionCookie } from './session-cookie.js';
import { startRequest } from '../http/hooks/request-context.js';
import type { SessionClaims } from './sessions.js';
import type { User } from './user.js';
import type { Actor } from '../roles/authorization.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated user; set before any handler runs. */
    viewer: User;
    /** The session the request came with, when it used the cookie. */
    session: SessionClaims | undefined;
    /**
     * The viewer as it acts in this request: its permissions, and for the audit trail its login, how
     * it proved who it is, its address and the request's id (docs/security.md#the-audit-trail). Every
     * service call that may change something is given this.
     */
    actor: Actor;
  }
}

/** 406 for an unknown extension; 404 for pagination segments where no list is served. */
function pathError(request: FastifyRequest, config: FastifyContextConfig): Error | undefined {
  const { extension, pagination } = request.requestPath;
  if (config.extension !== undefined) return extension === undefined || extension === config.extension ? undefined : new NotAcceptable();
  if (extension !== undefined && extension !== 'json' && extension !== 'xml') return new NotAcceptable();
  if (pagination.length > 0 && !config.paginated) return new NotFound();
  return undefined;
}

/**
 * Authorization or Cookie given twice: Node keeps the first Authorization and joins Cookies, so only
 * the raw headers tell. A loop over the raw header names, comparing lengths first: no allocation on
 * the common path.
 */
function duplicateCredentials(rawHeaders: string[]): Error | undefined {
  let authorizations = 0;
  let cookies = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 13 && (name === 'Authorization' || name === 'authorization' || name.toLowerCase() === 'authorization')) authorizations += 1;
    else if (name.length === 6 && (name === 'Cookie' || name === 'cookie' || name.toLowerCase() === 'cookie')) cookies += 1;
  }
  if (authorizations > 1) return new DuplicateCredentials('Authorization');
  if (cookies > 1) return new DuplicateCredentials('Cookie');
  return undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const CROSS_SITE_REFUSAL = 'A change made with the session cookie must come from this server\'s own origin and carry X-Requested-With';

/**
 * A request authorised by the session cookie alone that changes something (docs/security.md#the-session-cookie-and-csrf):
 * it must not come from another origin (Sec-Fetch-Site, Origin) and must carry X-Requested-With,
 * a header no other origin's page can send without cmi's consent (a CORS preflight cmi never grants).
 * Basic and API-key requests never get here: they carry what a browser never adds on its own.
 */
function crossSiteRefusal(request: FastifyRequest): Error | undefined {
  if (SAFE_METHODS.has(request.method)) return undefined;
  const { origin, 'sec-fetch-site': fetchSite, 'x-requested-with': requestedWith } = request.headers;
  if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') return new Forbidden(CROSS_SITE_REFUSAL);
  if (origin !== undefined && origin.toLowerCase() !== `${request.protocol}://${request.host}`.toLowerCase()) return new Forbidden(CROSS_SITE_REFUSAL);
  if (requestedWith === undefined || requestedWith === '') return new Forbidden(CROSS_SITE_REFUSAL);
  return undefined;
}

/** The path's refusal, or for a change made with the cookie, a cross-site one first. */
function refusal(request: FastifyRequest, config: FastifyContextConfig): Error | undefined {
  return (request.session !== undefined ? crossSiteRefusal(request) : undefined) ?? pathError(request, config);
}

/** The actor of a request `authenticated` admits (the one place it is built: docs/security.md#the-audit-trail). */
export function actorOf(request: FastifyRequest, authenticated: Authenticated, address = request.ip): Actor {
  const { user, session } = authenticated;
  return {
    id: user.id,
    permissions: user.permissions,
    login: user.login,
    credential: session !== undefined ? 'session' : authenticated.apiKeyId !== undefined ? 'api_key' : 'password',
    address,
    requestId: request.id,
    viaSession: session !== undefined,
    ...(session === undefined ? {} : { signedInAt: session.issuedAt }),
  };
}

function admit(request: FastifyRequest, reply: FastifyReply, authenticated: Authenticated, address: string): void {
  request.viewer = authenticated.user;
  request.session = authenticated.session;
  request.actor = actorOf(request, authenticated, address);
  if (authenticated.sessionToken) setSessionCookie(request, reply, authenticated.sessionToken);
}

/**
 * The one onRequest hook, built per route with that route's config: the request's context, then its
 * credentials (before anything about the path is revealed), then the path checks. A credential
 * verified moments ago is answered synchronously from the cache, the common case for API clients
 * that resend Basic auth on every request.
 */
export function requestGate(authenticator: Authenticator, config: FastifyContextConfig) {
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    startRequest(request);
    if (config.public) return done(pathError(request, config));
    const duplicate = duplicateCredentials(request.raw.rawHeaders);
    if (duplicate) return done(duplicate);
    const { authorization, cookie } = request.headers;
    const credentials = { authorization, cookie, connection: request.raw.socket, userAgent: request.headers['user-agent'] };
    // Read once: behind a trusted proxy it is worked out from X-Forwarded-For each time it is asked.
    const address = request.ip;
    const cached = authenticator.fromCache(credentials, address);
    if (cached) {
      admit(request, reply, cached, address);
      return done(refusal(request, config));
    }
    authenticator.authenticate(credentials, address).then((authenticated) => {
      admit(request, reply, authenticated, address);
      done(refusal(request, config));
    }, done);
  };
}

/** Puts the gate in front of every route (the not-found answer has its own: registerNotFoundAnswer). */
export function registerRequestGate(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('format', 'json');
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('requestPath');
  app.decorateRequest('viewer');
  app.decorateRequest('session');
  app.decorateRequest('actor');
  app.addHook('onRoute', (route) => {
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [requestGate(authenticator, route.config ?? {}), ...own];
  });
}

/**
 * The API's not-found answer. A request no route takes (an unknown path, or a method its path does not
 * route) is answered from its onRequest hook, with 401, 406 or 404, before fastify would read its body:
 * no body is parsed before credentials and a route accept it (an unread body closes the connection:
 * http/connections.ts closeIfBodyUnread). The hook lives in a context of its own with the handler, so
 * no routed request runs it. Register it after every hook of the application, which its context
 * inherits.
 */
export async function registerNotFoundAnswer(app: FastifyInstance, authenticator: Authenticator): Promise<void> {
  const notFoundGate = requestGate(authenticator, {});
  await app.register((notFound, _options, done) => {
    notFound.addHook('onRequest', (request, reply, hookDone) => notFoundGate(request, reply, (error) => hookDone(error ?? new NotFound())));
    // Reached only through reply.callNotFound() (`/` for API clients: app/root.routes.ts), which runs no
    // onRequest hook: the gate first, then 404.
    notFound.setNotFoundHandler((request, reply) =>
      new Promise<void>((resolve, reject) => notFoundGate(request, reply, (error) => (error ? reject(error) : resolve()))).then(() => {
        throw new NotFound();
      }),
    );
    done();
  });
}
