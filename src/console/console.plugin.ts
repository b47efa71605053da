import type { FastifyError, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { readCookie } from '../users/authentication.js';
import { actorOf } from '../users/request-gate.js';
import type { User } from '../users/user.js';
import { consoleExpiryRedirect } from '../users/password-expiry.js';
import { consoleEnrolmentRedirect } from '../users/two-factor-requirement.js';
import type { AuditActor } from '../audit/audit-event.js';
import { consoleAuditRoutes } from './audit.routes.js';
import { Forbidden, INTERNAL_ERROR_CODE, NotFound, problemOf, Unauthorized } from '../shared/problems.js';
import { startRequest } from '../http/hooks/request-context.js';
import { type ConsoleServices, contentSecurityPolicy, formOf, sendPage } from './console-page.js';
import {
  CONSOLE_COOKIE, CrossSiteRequest, CSRF_FIELD, clearConsoleCookie, fromSameOrigin, SessionEnded, setConsoleCookie,
} from './console-session.js';
import { bare, page, problem } from './layout.js';
import { consoleAssetsRoutes } from './assets.routes.js';
import { consoleErrorsRoutes } from './errors.routes.js';
import { consoleOverviewRoutes } from './overview.routes.js';
import { consoleIngestKeysRoutes } from './ingest-keys.routes.js';
import { consoleSourcesRoutes } from './sources.routes.js';
import { consoleAlertsRoutes } from './alerts.routes.js';
import { consoleSignInRoutes } from './sign-in.routes.js';
import { consoleSsoRoutes } from './sso.routes.js';
import { consoleUnlockRoutes } from './unlock-page.js';
import { consoleUsersRoutes } from './users.routes.js';
import { consoleRolesRoutes } from './roles.routes.js';
import { consoleBucketsRoutes } from './buckets.routes.js';
import { consolePasswordPolicyRoutes } from './password-policy.routes.js';
import { consoleGroupsRoutes } from './groups.routes.js';
import { consoleIdentityProvidersRoutes } from './identity-providers.routes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A console route that needs no console session (sign-in, its assets). */
    consoleAnonymous?: boolean;
    /** A POST another site makes by design (a SAML provider's HTTP-POST binding): no origin check, its own proof stands for it. */
    consoleCrossSite?: boolean;
  }
}

function securityHeaders(reply: FastifyReply): void {
  reply.headers({
    'content-security-policy': contentSecurityPolicy(),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
  });
}

/** Largest form the console accepts (a user's fields, or a page of selected errors). */
const FORM_LIMIT_BYTES = 64 * 1024;

/**
 * The operator console under /console (docs/console.md): HTML pages over the same domain services and
 * rules as the API. Its hooks, body parser and error handler live in this plugin's own context, so
 * the API's routes run none of them.
 */
export const consolePlugin: FastifyPluginCallback<ConsoleServices> = (app, services, done) => {
  const { authenticator, sessionTokens, clock } = services;

  // Forms only: the API's JSON and XML readers (CMI_BODY_LIMIT) are not inherited, so the sign-in
  // form, open to anyone, reads no body of another type nor one over the form's limit (415, 413).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES }, (_request, body, done) => {
    done(null, new URLSearchParams(body as string));
  });

  /** Who is asking, from the console's cookie; a POST from another origin is refused before its body is read. */
  const consoleGate = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    securityHeaders(reply);
    if (request.method === 'POST' && !request.routeOptions.config.consoleCrossSite && !fromSameOrigin(request)) throw new CrossSiteRequest();
    if (request.routeOptions.config.consoleAnonymous) return;
    const token = readCookie(request.headers.cookie, CONSOLE_COOKIE);
    if (token === undefined || token === '') throw new SessionEnded();
    const authenticated = await authenticator.session(token, request.ip).catch((error: unknown) => {
      throw error instanceof Unauthorized ? new SessionEnded() : error;
    });
    request.session = authenticated.session;
    // A session cookie, which a thief may hold alone: a new login, email, password or API key needs
    // the current password here as through the API's cookie (docs/security.md#self-service).
    request.actor = actorOf(request, authenticated);
    // The viewer carries what the audit trail records of the actor too, so a page that hands a service
    // `request.viewer` is recorded as fully as one that hands it `request.actor` (docs/security.md#the-audit-trail).
    const viewer: User & AuditActor = { ...authenticated.user, credential: 'session', address: request.ip, requestId: request.id };
    request.viewer = viewer;
    if (authenticated.sessionToken) setConsoleCookie(request, reply, authenticated.sessionToken);
    // An expired password may only be changed (docs/security.md#password-policy).
    const expired = services.passwordExpiry ? consoleExpiryRedirect(request, authenticated.user, services.passwordExpiry) : undefined;
    if (expired !== undefined) return reply.code(303).header('location', expired).send();
    // A role requiring a second factor its holder lacks: enrol first (docs/security.md#second-factor).
    const enrol = consoleEnrolmentRedirect(request, authenticated.user);
    if (enrol !== undefined) return reply.code(303).header('location', enrol).send();
  };
  // After the API's gate of each route (which starts the request's clock and context), never instead of it.
  app.addHook('onRoute', (route) => {
    route.onRequest = [...[route.onRequest ?? []].flat(), consoleGate];
  });

  // Pages hold what a signed-in user saw (addresses, backtraces, contexts, the CSRF token): never kept
  // by the browser, so none comes back from its cache or history after sign-out. After the API's
  // onSend, which gives a GET its ETag and `private, must-revalidate`; the assets keep those.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (String(reply.getHeader('content-type')).startsWith('text/html')) {
      reply.header('cache-control', 'no-store');
      reply.removeHeader('etag');
    }
    done(null, payload);
  });

  // The CSRF token of every POST of a session, once its form is read (docs/console.md#security).
  app.addHook('preHandler', (request, _reply, done) => {
    if (request.method !== 'POST' || request.routeOptions.config.consoleAnonymous) return done();
    const given = formOf(request).get(CSRF_FIELD) ?? '';
    const claims = request.session;
    done(claims && sessionTokens.csrfTokenMatches(claims, given) ? undefined : new CrossSiteRequest());
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    securityHeaders(reply);
    reply.removeHeader('x-total');
    if (error instanceof SessionEnded) {
      clearConsoleCookie(request, reply);
      const next = request.method === 'GET' ? request.url : '/console';
      // "Your session has ended" only to a browser that had one; a first visit just gets the form.
      const ended = readCookie(request.headers.cookie, CONSOLE_COOKIE) ? 'ended=1&' : '';
      return reply.code(303).header('location', `/console/sign-in?${ended}next=${encodeURIComponent(next)}`).send();
    }
    const signedIn = request.viewer !== undefined && request.session !== undefined;
    const show = (status: number, heading: string, messages: string[]) => {
      const content = problem(heading, messages, request.id);
      const body = signedIn ? page({ viewer: request.viewer, csrf: sessionTokens.csrfToken(request.session!), now: clock() }, heading, content) : bare(heading, content);
      return sendPage(reply, body, status);
    };
    const answered = problemOf(error);
    if (answered) {
      // Retry-After of a 429 or a 503 is worth keeping; a Basic challenge would make the browser prompt.
      for (const [name, value] of Object.entries(answered.headers)) if (name !== 'WWW-Authenticate') reply.header(name, value);
      const heading = answered instanceof NotFound ? 'Not found' : answered instanceof Forbidden ? 'Not allowed' : 'That did not work';
      return show(answered.status, heading, Object.entries(answered.messages).flatMap(([field, messages]) => messages.map((m) => (field === 'base' ? m : `${field} ${m}`))));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return show(status, 'That did not work', [status === 413 ? 'The form is too large' : 'The request could not be read']);
    const fault = request.server.faults.capture(error, { request_id: request.id, method: request.method, route: request.routeOptions.url ?? '(no route)', component: 'console' });
    if (fault.log) request.log.error({ code: INTERNAL_ERROR_CODE, err: error, requestId: request.id, fingerprint: fault.fingerprint }, 'fault');
    return show(500, 'Something failed', [`Internal server error (request ${request.id})`]);
  });

  // A console path that is no page: the console's own 404 (the API's not-found answer would ask for Basic credentials).
  app.setNotFoundHandler((request, reply) => {
    startRequest(request);
    securityHeaders(reply);
    return sendPage(reply, bare('Not found', problem('Not found', ['There is no such page in the console.'], request.id)), 404);
  });

  consoleAssetsRoutes(app);
  consoleSignInRoutes(app, services);
  consoleSsoRoutes(app, services);
  consoleUnlockRoutes(app, services);
  consoleOverviewRoutes(app, services);
  consoleErrorsRoutes(app, services);
  consoleUsersRoutes(app, services);
  consoleRolesRoutes(app, services);
  consoleBucketsRoutes(app, services);
  consolePasswordPolicyRoutes(app, services);
  consoleGroupsRoutes(app, services);
  consoleIngestKeysRoutes(app, services);
  consoleSourcesRoutes(app, services);
  consoleAuditRoutes(app, services);
  consoleAlertsRoutes(app, services);
  consoleIdentityProvidersRoutes(app, services);
  done();
};
