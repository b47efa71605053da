import type { FastifyInstance } from 'fastify';
import { BadGateway, Forbidden, TooManyRequests, Unauthorized, Unprocessable } from '../shared/problems.js';
import { clearConsoleCookie, safeNext, setConsoleCookie } from './console-session.js';
import { secondFactorPage, signedInPage, signInPage } from './sign-in-page.js';
import { readCookie, SecondFactorDue } from '../users/authentication.js';
import { HANDOFF_COOKIE, HANDOFF_PATH } from '../users/sign-in-handoff.js';
import { secondFactorTokens } from '../users/second-factor-token.js';
import { seesOverview } from './layout.js';
import { consoleRoute, type ConsoleServices, formOf, sendPage } from './console-page.js';

/** Longest password the form passes on (no account's password is longer: docs/limits.md). */
const MAX_PASSWORD_CHARS = 1024;

/** Why POST /users/sign_in sent the browser back (docs/console.md#signing-in-from-another-site). */
const SIGN_IN_FORM_FAILURES: Record<string, string> = {
  credentials: 'The login or the password is wrong, or the account is not active.',
  locked: 'Too many failed sign-ins: the account or this address is locked for now. Try again later.',
  expired: 'That sign-in link has expired or was used. Sign in here.',
  address: 'This account may not be used from this address.',
  directory: 'The directory that checks this password cannot be reached now: try again later, or ask an administrator.',
};

/** Signing in and out of the console (docs/console.md#signing-in). */
export function consoleSignInRoutes(app: FastifyInstance, { authenticator, clock, sessionTokens, twoFactor, signInHandoff: handoff, sso }: ConsoleServices): void {
  const stepTokens = secondFactorTokens(sessionTokens, clock);
  // The identity providers' buttons (docs/console.md#signing-in-with-an-identity-provider).
  const providers = async () => (sso === undefined ? [] : sso.buttons());
  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/sign-in', consoleRoute(true), async (request, reply) => {
    const { next, ended, signed_out: signedOut, password_changed: passwordChanged, failed } = request.query;
    const notice = ended === '1' ? 'Your session has ended. Sign in again to go on.'
      : signedOut === '1' ? 'You have signed out.'
      : passwordChanged === '1' ? 'Your password has changed, and your sessions have ended: sign in with the new one.'
      : undefined;
    // The sign-in form of another site (POST /users/sign_in) sends its failures here, by name only.
    const failure = typeof failed === 'string' ? SIGN_IN_FORM_FAILURES[failed] : undefined;
    return sendPage(reply, signInPage({ next: safeNext(typeof next === 'string' ? next : undefined), notice, providers: await providers(), ...(failure === undefined ? {} : { failure }) }), failure === undefined ? 200 : 401);
  });

  // The page POST /users/sign_in sends a browser to: it redeems the code (users/sign-in-handoff.ts), sets
  // the console's cookie and navigates itself to the console, a same-site navigation on which the
  // SameSite=Strict cookie is sent (it is not on the redirect from the other site's form).
  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/sign-in/complete', consoleRoute(true), async (request, reply) => {
    const { code } = request.query;
    const token = typeof code === 'string' && code.length <= 200 && handoff !== undefined ? await handoff.redeem(code, readCookie(request.headers.cookie, HANDOFF_COOKIE)) : undefined;
    // The browser's key goes with the code, whatever became of it.
    reply.header('set-cookie', `${HANDOFF_COOKIE}=; Path=${HANDOFF_PATH}; Max-Age=0; HttpOnly; SameSite=Lax${request.protocol === 'https' ? '; Secure' : ''}`);
    if (token === undefined) return reply.code(303).header('location', '/console/sign-in?failed=expired').send();
    setConsoleCookie(request, reply, token);
    return sendPage(reply, signedInPage());
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
      // The password was right; the code is asked on a page of its own (docs/security.md#second-factor).
      if (error instanceof SecondFactorDue) return sendPage(reply, secondFactorPage({ next, token: stepTokens.issue(error.user.id, error.sessionEpoch) }));
      if (error instanceof TooManyRequests) {
        reply.headers(error.headers);
        // What the lockout says: which counters are full, until when, and how an administrator ends it
        // (users/lockout.ts; the same for every login, known or not).
        return sendPage(reply, signInPage({ next, login, failure: Object.values(error.messages).flat().join(' ') }), 429);
      }
      // A directory that vouched for the password, for an account cmi refuses, says why (identity/identity-directory.ts).
      if (error instanceof Unauthorized) return sendPage(reply, signInPage({ next, login, providers: await providers(), failure: error.message === new Unauthorized().message ? 'The login or the password is wrong, or the account is not active.' : error.message }), 401);
      // No directory could be asked (docs/sso-ldap.md).
      if (error instanceof BadGateway) return sendPage(reply, signInPage({ next, login, providers: await providers(), failure: error.message }), 502);
      // The account's allowed addresses do not hold this one (docs/security.md#allowed-addresses): said after a right password only.
      if (error instanceof Forbidden) return sendPage(reply, signInPage({ next, login, failure: error.message }), 403);
      throw error;
    }
  });

  // The second step's page for a sign-in begun by the form of another site (POST /users/sign_in), which
  // sends the browser here with its "password verified" token: the code is asked as after the console's own form.
  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/sign-in/code', consoleRoute(true), (request, reply) => {
    const { token } = request.query;
    if (typeof token !== 'string' || stepTokens.verify(token) === undefined) return reply.code(303).header('location', '/console/sign-in?failed=expired').send();
    return sendPage(reply, secondFactorPage({ next: '/console', token }));
  });

  // The second step: the "password verified" token the first step gave, and the code; a wrong code
  // counts on the lockout like a wrong password (two-factor.service.ts verifySignInCode).
  app.post('/sign-in/code', consoleRoute(true), async (request, reply) => {
    const form = formOf(request);
    const token = form.get('token') ?? '';
    const code = form.get('code') ?? '';
    const next = safeNext(form.get('next') ?? undefined);
    const step = stepTokens.verify(token);
    const expired = () => sendPage(reply, signInPage({ next, failure: 'The sign-in took too long, or the account changed: sign in again.' }), 401);
    if (step === undefined) return expired();
    const user = await authenticator.userOf(step.userId);
    if (user === undefined) return expired();
    try {
      const actor = { id: user.id, login: user.login, credential: 'password' as const, address: request.ip, requestId: request.id, permissions: user.permissions };
      const kind = await twoFactor.verifySignInCode(actor, user.id, user.login, code, request.ip);
      if (kind === undefined) return sendPage(reply, secondFactorPage({ next, token, failure: 'The code is wrong, or was used already.' }), 401);
      const { sessionToken } = await authenticator.completeSignIn(step.userId, step.epoch, request.ip, request.id);
      setConsoleCookie(request, reply, sessionToken);
      return reply.code(303).header('location', next).send();
    } catch (error) {
      if (error instanceof TooManyRequests) {
        reply.headers(error.headers);
        return sendPage(reply, signInPage({ next, login: user.login, failure: Object.values(error.messages).flat().join(' ') }), 429);
      }
      if (error instanceof Unauthorized) return expired();
      // A YubiKey's OTP: cmi cannot check it, and says so (users/yubi-keys.service.ts).
      if (error instanceof Unprocessable) return sendPage(reply, secondFactorPage({ next, token, failure: Object.values(error.messages).flat().join(' ') }), 422);
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
    reply.code(303).header('location', seesOverview(request.viewer) ? '/console/overview' : '/console/users').send());
}
