import type { FastifyInstance } from 'fastify';
import { TooManyRequests, Unauthorized } from '../shared/problems.js';
import { clearConsoleCookie, safeNext, setConsoleCookie } from './console-session.js';
import { signInPage } from './sign-in-page.js';
import { may } from '../roles/authorization.js';
import { consoleRoute, type ConsoleServices, formOf, sendPage } from './console-page.js';

/** Longest password the form passes on (no account's password is longer: docs/limits.md). */
const MAX_PASSWORD_CHARS = 1024;

/** Signing in and out of the console (docs/console.md#signing-in). */
export function consoleSignInRoutes(app: FastifyInstance, { authenticator, clock }: ConsoleServices): void {
  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/sign-in', consoleRoute(true), (request, reply) => {
    const { next, ended, signed_out: signedOut, password_changed: passwordChanged } = request.query;
    const notice = ended === '1' ? 'Your session has ended. Sign in again to go on.'
      : signedOut === '1' ? 'You have signed out.'
      : passwordChanged === '1' ? 'Your password has changed, and your sessions have ended: sign in with the new one.'
      : undefined;
    return sendPage(reply, signInPage({ next: safeNext(typeof next === 'string' ? next : undefined), notice }));
  });

  app.post('/sign-in', consoleRoute(true), async (request, reply) => {
    const form = formOf(request);
    const login = (form.get('login') ?? '').trim();
    const password = form.get('password') ?? '';
    const next = safeNext(form.get('next') ?? undefined);
    try {
      if (password.length > MAX_PASSWORD_CHARS) throw new Unauthorized();
      const { sessionToken } = await authenticator.signIn(login, password, request.ip, request.id, request.headers['user-agent']);
      setConsoleCookie(request, reply, sessionToken);
      return reply.code(303).header('location', next).send();
    } catch (error) {
      if (error instanceof TooManyRequests) {
        reply.headers(error.headers);
        // What the lockout says: which counters are full, until when, and how an administrator ends it
        // (users/lockout.ts; the same for every login, known or not).
        return sendPage(reply, signInPage({ next, login, failure: Object.values(error.messages).flat().join(' ') }), 429);
      }
      if (error instanceof Unauthorized) return sendPage(reply, signInPage({ next, login, failure: 'The login or the password is wrong, or the account is not active.' }), 401);
      throw error;
    }
  });

  /** Ends this session (the token is revoked, not only forgotten) and clears the cookie. */
  app.post('/sign-out', consoleRoute(), async (request, reply) => {
    if (request.session) await authenticator.endSession(request.session, clock(), request.actor);
    clearConsoleCookie(request, reply);
    return reply.code(303).header('location', '/console/sign-in?signed_out=1').send();
  });

  app.get('/', consoleRoute(), (request, reply) =>
    reply.code(303).header('location', may(request.viewer, 'infrastructure_errors.read') ? '/console/errors' : '/console/users').send());
}
