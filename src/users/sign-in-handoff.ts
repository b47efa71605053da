import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { RevokedSessionsRepository } from './revoked-sessions.store.js';
import type { SessionTokens } from './sessions.js';
import type { UsersRepository } from './users.store.js';

/** How long a hand-off code may wait before the console redeems it, in seconds. */
export const HANDOFF_SECONDS = 60;

const CODE = /^(\d{1,10})\.(\d{1,10})\.([0-9a-f]{32})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * The sign-in form's hand-off (docs/console.md#signing-in-from-another-site): a browser that signed
 * in through `POST /users/sign_in`, posted from another site, is sent to the console with a code in
 * the URL, because the console's `SameSite=Strict` cookie set on that redirect would not be sent on
 * the page after it. The code is `<userId>.<epoch>.<nonce>.<expiry>.<HMAC>` under the installation's
 * key: no session in the URL, valid 60 seconds, used once (its nonce is then kept with the revoked
 * sessions, in every process), and void once the user's sessions end (its epoch).
 */
export function signInHandoff(sessions: SessionTokens, revokedSessions: RevokedSessionsRepository, users: UsersRepository, clock: Clock) {
  const seconds = () => Math.floor(clock().getTime() / 1000);
  return {
    /** A code for user `userId` at session epoch `epoch`. */
    create(userId: number, epoch: number): string {
      const body = `${userId}.${epoch}.${randomUUID().replaceAll('-', '')}.${seconds() + HANDOFF_SECONDS}`;
      return `${body}.${sessions.macFor('sign-in', body)}`;
    },

    /** A new console session token for a genuine, current, unused code; undefined for anything else. */
    async redeem(code: string): Promise<string | undefined> {
      const match = CODE.exec(code);
      if (!match) return undefined;
      const [, userId, epoch, nonce, expiry, mac] = match as unknown as string[];
      const expected = Buffer.from(sessions.macFor('sign-in', `${userId}.${epoch}.${nonce}.${expiry}`));
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
