import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IdentityRefused, ProviderUnavailable } from '../identity/external-identity.js';
import { SSO_COOKIE, SSO_PATH, ATTEMPT_SECONDS, type SsoSignedIn } from '../identity/sso-sign-in.js';
import { parseId } from '../http/route-params.js';
import { Forbidden, TooManyRequests, Unauthorized } from '../shared/problems.js';
import { readCookie, SecondFactorDue } from '../users/authentication.js';
import { secondFactorTokens } from '../users/second-factor-token.js';
import { safeNext, setConsoleCookie } from './console-session.js';
import { consoleRoute, type ConsoleServices, contentSecurityPolicy, formOf, sendPage } from './console-page.js';
import { postToProviderPage, secondFactorPage, signedInPage, signInPage } from './sign-in-page.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

const ssoCookie = (request: FastifyRequest, value: string, maxAge: number) =>
  `${SSO_COOKIE}=${value}; Path=${SSO_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${request.protocol === 'https' ? '; Secure' : ''}`;

/**
 * Signing in through an identity provider from the console (docs/console.md#signing-in-with-an-identity-provider):
 * `start` sends the browser to its provider with the key of its attempt in a Lax cookie; an OpenID
 * Connect provider sends it back to `callback`, a SAML one posts to `acs`, which sends it on to
 * `complete` (a top-level GET, where the Lax cookie comes again). The session is then set on a page that
 * navigates itself to the console: the console's `SameSite=Strict` cookie set on a cross-site return
 * would not be sent on the next page, but is on this same-site navigation (as for /console/sign-in/complete).
 */
export function consoleSsoRoutes(app: FastifyInstance, { authenticator, sso, publicUrl, clock, sessionTokens }: ConsoleServices): void {
  if (sso === undefined) return;
  const stepTokens = secondFactorTokens(sessionTokens, clock);
  const baseOf = (request: FastifyRequest) => publicUrl ?? `${request.protocol}://${request.host}`;

  /** What a refused or failed sign-in shows: the sign-in page, saying why, with the providers' buttons to try again. */
  async function refused(reply: FastifyReply, error: unknown): Promise<FastifyReply> {
    const again = async (failure: string, status: number) => sendPage(reply, signInPage({ next: '/console', failure, providers: await sso!.buttons() }), status);
    if (error instanceof ProviderUnavailable) return again(`The identity provider cannot be reached: ${error.message}`, 502);
    if (error instanceof IdentityRefused) return again(error.message, 401);
    if (error instanceof TooManyRequests) {
      reply.headers(error.headers);
      return again(Object.values(error.messages).flat().join(' '), 429);
    }
    if (error instanceof Forbidden) return again(error.message, 403);
    if (error instanceof Unauthorized) return again('This account is not active.', 401);
    throw error;
  }

  /** The session for the account the provider vouched for, set on the page that goes on to `next`. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply, { userId, next }: SsoSignedIn): Promise<FastifyReply> {
    reply.header('set-cookie', ssoCookie(request, '', 0));
    try {
      const { sessionToken } = await authenticator.signInVouched(userId, request.ip, request.id, request.headers['user-agent']);
      setConsoleCookie(request, reply, sessionToken);
      return sendPage(reply, signedInPage(next));
    } catch (error) {
      // The provider vouched; an account with a second factor still gives its code (docs/security.md#second-factor).
      if (error instanceof SecondFactorDue) return sendPage(reply, secondFactorPage({ next, token: stepTokens.issue(error.user.id, error.sessionEpoch) }));
      return refused(reply, error);
    }
  }

  app.get<WithId>(`/sso/:id/start`, consoleRoute(true), async (request, reply) => {
    const next = safeNext(typeof request.query.next === 'string' ? request.query.next : undefined);
    try {
      const { start, browserKey } = await sso.start(parseId(request.params.id), next, baseOf(request), request.ip);
      reply.header('set-cookie', ssoCookie(request, browserKey, ATTEMPT_SECONDS));
      if ('redirect' in start) return await reply.code(303).header('location', start.redirect).send();
      // SAML's HTTP-POST binding: a form the page posts to the provider, the one origin beside this one it may post to.
      reply.header('content-security-policy', contentSecurityPolicy(new URL(start.post.action).origin)).header('cache-control', 'no-store');
      return sendPage(reply, postToProviderPage(start.post.action, start.post.fields));
    } catch (error) {
      return refused(reply, error);
    }
  });

  // An OpenID Connect provider's return: code and state in the query (the authorization code flow).
  app.get<WithId>(`/sso/:id/callback`, consoleRoute(true), async (request, reply) => {
    try {
      const answer = await sso.oidcReturn(parseId(request.params.id), baseOf(request), request.url, readCookie(request.headers.cookie, SSO_COOKIE), request.ip);
      return await signedIn(request, reply, answer);
    } catch (error) {
      return refused(reply, error);
    }
  });

  // A SAML provider's answer (HTTP-POST binding), posted by the provider's page from its own site: the
  // origin check does not apply (the signed assertion, its InResponseTo and the attempt stand for it).
  app.post<WithId>(`/sso/:id/acs`, { config: { ...consoleRoute(true).config, consoleCrossSite: true } }, async (request, reply) => {
    const form = formOf(request);
    try {
      const id = parseId(request.params.id);
      const attempt = await sso.samlAnswer(id, { SAMLResponse: form.get('SAMLResponse') ?? undefined, RelayState: form.get('RelayState') ?? undefined }, baseOf(request), request.ip);
      return await reply.code(303).header('location', `${SSO_PATH}${id}/complete?attempt=${attempt}`).send();
    } catch (error) {
      return refused(reply, error);
    }
  });

  app.get<WithId>(`/sso/:id/complete`, consoleRoute(true), async (request, reply) => {
    const attempt = typeof request.query.attempt === 'string' ? request.query.attempt : undefined;
    try {
      return await signedIn(request, reply, await sso.samlComplete(parseId(request.params.id), attempt, readCookie(request.headers.cookie, SSO_COOKIE)));
    } catch (error) {
      return refused(reply, error);
    }
  });

  // cmi's service provider metadata for a SAML provider: its entity id is this URL.
  app.get<WithId>(`/sso/:id/metadata`, consoleRoute(true), async (request, reply) =>
    reply.type('application/samlmetadata+xml; charset=utf-8').send(await sso.metadata(parseId(request.params.id), baseOf(request))));
}
