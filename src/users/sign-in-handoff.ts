import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { RevokedSessionsRepository } from './revoked-sessions.store.js';
import type { SessionTokens } from './sessions.js';
import type { UsersRepository } from './users.store.js';

/** How long a hand-off code may wait before the console redeems it, in seconds. */
export const HANDOFF_SECONDS = 60;

/**
 * The cookie that binds a code to the browser it was given to: set on the form's 303 (`SameSite=Lax`,
 * so it is sent on the top-level navigation that follows a cross-site POST, and only to the page that
 * redeems the code), asked back there. A code taken by a script and handed to another browser (a login
 * CSRF: signing a victim's browser into the attacker's account) finds no such cookie there.
 */
export const HANDOFF_COOKIE = '_cmi_sign_in';
export const HANDOFF_PATH = '/console/sign-in/complete';
const BROWSER_KEY = /^[A-Za-z0-9_-]{43}$/;

const CODE = /^(\d{1,10})\.(\d{1,10})\.([0-9a-f]{32})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * The sign-in form's hand-off (docs/console.md#signing-in-from-another-site): a browser that signed
 * in through `POST /users/sign_in`, posted from another site, is sent to the console with a code in
 * the URL, because the console's `SameSite=Strict` cookie set on that redirect would not be sent on
 * the page after it. The code is `<userId>.<epoch>.<nonce>.<expiry>.<HMAC>` under the installation's
 * key, which covers the browser's key too (HANDOFF_COOKIE): no session in the URL, valid 60 seconds,
 * used once (its nonce is then kept with the revoked sessions, in every process), only in the browser
 * that posted the form, and void once the user's sessions end (its epoch).
 */
export function signInHandoff(sessions: SessionTokens, revokedSessions: RevokedSessionsRepository, users: UsersRepository, clock: Clock) {
  const seconds = () => Math.floor(clock().getTime() / 1000);
  return {
    /** A code for user `userId` at session epoch `epoch`, and the key of the browser it is for (HANDOFF_COOKIE). */
    create(userId: number, epoch: number): { code: string; browserKey: string } {
      const browserKey = randomBytes(32).toString('base64url');
      const body = `${userId}.${epoch}.${randomUUID().replaceAll('-', '')}.${seconds() + HANDOFF_SECONDS}`;
      return { code: `${body}.${sessions.macFor('sign-in', `${body}.${browserKey}`)}`, browserKey };
    },

    /** A new console session token for a genuine, current, unused code; undefined for anything else. */
    async redeem(code: string, browserKey: string | undefined): Promise<string | undefined> {
      const match = CODE.exec(code);
      if (!match || browserKey === undefined || !BROWSER_KEY.test(browserKey)) return undefined;
      const [, userId, epoch, nonce, expiry, mac] = match as unknown as string[];
      const expected = Buffer.from(sessions.macFor('sign-in', `${userId}.${epoch}.${nonce}.${expiry}.${browserKey}`));
      if (!timingSafeEqual(expected, Buffer.from(mac as string))) return undefined;
      const now = seconds();
      if (Number(expiry) < now || Number(expiry) > now + HANDOFF_SECONDS) return undefined;
      if (!(await revokedSessions.claim(nonce as string, new Date(Number(expiry) * 1000)))) return undefined;
      const found = await users.findWithSessionEpoch(Number(userId));
      if (!found || found.session_epoch !== Number(epoch) || found.user.status !== 'active') return undefined;
      return sessions.issue(found.user.id, found.session_epoch, 'console');
    },
  };
}

export type SignInHandoff = ReturnType<typeof signInHandoff>;
