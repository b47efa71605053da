import type { FastifyInstance } from 'fastify';
import { Unprocessable } from '../shared/problems.js';
import { consoleRoute, type ConsoleServices, formOf, sendPage } from './console-page.js';
import { html, type Html } from './html.js';
import { bare } from './layout.js';

/**
 * The page the unlock mail links to (docs/console.md#unlocking-an-account): `/console/unlock?user=ID&token=...`
 * shows one button, which posts the token to `/console/unlock`, which unlocks as POST
 * /users/:id/unlock_account does. A GET changes nothing (a mail scanner following the link unlocks
 * nothing); the POST needs no session and no CSRF token: the token is the credential, and a page of
 * another site cannot know it.
 */
function unlockPage({ user, token, failure }: { user: string; token: string; failure?: string }): Html {
  return bare('Unlock your account', html`<h1>Unlock your account</h1>
${failure ? html`<p class="error" role="alert">${failure}</p>` : ''}
<p>Too many failed sign-ins locked this account. Unlock it to sign in again now.</p>
<form method="post" action="/console/unlock" class="stacked">
<input type="hidden" name="user" value="${user}">
<input type="hidden" name="token" value="${token}">
<button type="submit">Unlock</button>
</form>`);
}

const unlockedPage = () => bare('Account unlocked', html`<h1>Account unlocked</h1>
<p class="notice" role="status">The account is unlocked. <a href="/console/sign-in">Sign in</a>.</p>`);

const text = (value: unknown, max: number) => (typeof value === 'string' && value.length <= max ? value : '');

export function consoleUnlockRoutes(app: FastifyInstance, { accountUnlock }: ConsoleServices): void {
  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/unlock', consoleRoute(true), (request, reply) =>
    sendPage(reply, unlockPage({ user: text(request.query.user, 12), token: text(request.query.token, 128) })));

  app.post('/unlock', consoleRoute(true), async (request, reply) => {
    const form = formOf(request);
    const user = text(form.get('user'), 12);
    const token = text(form.get('token'), 128);
    const failed = () => sendPage(reply, unlockPage({ user, token, failure: 'This unlock link is invalid, used or expired. Wait for the lock to end, or ask an administrator.' }), 422);
    if (accountUnlock === undefined || !/^[1-9]\d{0,11}$/.test(user)) return failed();
    try {
      await accountUnlock.unlock(Number(user), { unlock_token: token }, { address: request.ip, requestId: request.id });
    } catch (error) {
      if (error instanceof Unprocessable) return failed();
      throw error;
    }
    return sendPage(reply, unlockedPage());
  });
}
