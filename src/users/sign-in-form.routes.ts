import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { BadGateway, Forbidden, TooManyRequests, Unauthorized } from '../shared/problems.js';
import type { Clock } from '../shared/clock.js';
import { type Authenticator, SecondFactorDue } from './authentication.js';
import { secondFactorTokens } from './second-factor-token.js';
import type { SessionTokens } from './sessions.js';
import { HANDOFF_COOKIE, HANDOFF_PATH, HANDOFF_SECONDS, type SignInHandoff } from './sign-in-handoff.js';

export const SIGN_IN_FORM_ROUTES: readonly RouteSpec[] = [
  {
    method: 'POST', path: '/users/sign_in', summary: 'The sign-in form WHMCS posts (user[login], user[password]): 303 to the console, signed in, or to its sign-in page with the reason; from cmi\'s own origin or one of CMI_SIGN_IN_ORIGINS only',
    who: 'anyone', formats: false, answers: { 303: { empty: true } },
  },
];

/** Longest form and password taken (no account's password is longer: docs/limits.md). */
const FORM_LIMIT_BYTES = 8192;
const MAX_PASSWORD_CHARS = 1024;

export const SIGN_IN_ORIGIN_REFUSAL = 'The sign-in form must be posted from this server\'s own origin or one of CMI_SIGN_IN_ORIGINS';

/** The origin a browser says the form came from: Origin, else Referer's origin; undefined when it says neither. */
function originOf(request: FastifyRequest): string | undefined {
  const { origin, referer } = request.headers;
  if (origin !== undefined && origin !== 'null') return origin.toLowerCase();
  if (origin === 'null' || referer === undefined) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

export interface SignInFormOptions {
  authenticator: Authenticator;
  sessions: SessionTokens;
  handoff: SignInHandoff;
  clock: Clock;
  /** CMI_SIGN_IN_ORIGINS (cmi's own origin is always allowed). */
  origins: readonly string[];
}

/**
 * `POST /users/sign_in` as OnApp's WHMCS users module posts it (docs/console.md#signing-in-from-another-site):
 * a browser form, urlencoded `user[login]`, `user[password]`, `commit`, from the billing site in a new
 * tab. Its own context: the one API route that reads a form.
 */
export const signInFormRoutes: FastifyPluginCallback<SignInFormOptions> = (app, { authenticator, sessions, handoff, clock, origins }, done) => {
  const allowed = new Set(origins);
  const stepTokens = secondFactorTokens(sessions, clock);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES }, (_request, body, parsed) => parsed(null, new URLSearchParams(body as string)));

  app.post('/users/sign_in', { config: { public: true } }, async (request, reply) => {
    const origin = originOf(request);
    // Any other site could sign a browser into an account of its choosing (login CSRF): refused.
    if (origin === undefined || (origin !== `${request.protocol}://${request.host}`.toLowerCase() && !allowed.has(origin))) throw new Forbidden(SIGN_IN_ORIGIN_REFUSAL);
    const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    const login = (form.get('user[login]') ?? '').trim();
    const password = form.get('user[password]') ?? '';
    let failed: string;
    try {
      if (password.length > MAX_PASSWORD_CHARS) throw new Unauthorized();
      // The one check of the credentials: the lockout, and whatever else signing in to the console asks, applies here as there.
      const { sessionToken } = await authenticator.signIn(login, password, request.ip, request.id, request.headers['user-agent']);
      const claims = sessions.verify(sessionToken, 'console');
      if (claims === undefined) throw new Unauthorized();
      const { code, browserKey } = handoff.create(claims.userId, claims.epoch);
      reply.header('set-cookie', `${HANDOFF_COOKIE}=${browserKey}; Path=${HANDOFF_PATH}; Max-Age=${HANDOFF_SECONDS}; HttpOnly; SameSite=Lax${request.protocol === 'https' ? '; Secure' : ''}`);
      return reply.code(303).header('location', `${HANDOFF_PATH}?code=${code}`).send();
    } catch (error) {
      // The password was right and the account has a second factor: the console asks for the code
      // (a same-site page from here on, so its cookie is set where the browser sends it).
      if (error instanceof SecondFactorDue) return reply.code(303).header('location', `/console/sign-in/code?token=${stepTokens.issue(error.user.id, error.sessionEpoch)}`).send();
      if (error instanceof TooManyRequests) failed = 'locked';
      // A right password from an address the account's list does not hold (docs/security.md#allowed-addresses).
      else if (error instanceof Forbidden) failed = 'address';
      else if (error instanceof Unauthorized) failed = 'credentials';
      // No LDAP directory could be asked (identity/identity-directory.ts): the console's page says so, never a 500.
      else if (error instanceof BadGateway) failed = 'directory';
      else throw error;
    }
    return reply.code(303).header('location', `/console/sign-in?failed=${failed}`).send();
  });
  done();
};
