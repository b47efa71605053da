import { timingSafeEqual } from 'node:crypto';
import type { SessionTokens } from './sessions.js';

/** How long the "password verified" step of a sign-in lasts before the code must be given (docs/security.md#second-factor). */
export const SECOND_FACTOR_STEP_SECONDS = 300;

const TOKEN = /^(\d{1,15})\.(\d{1,15})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

/**
 * The console's "password verified, code due" token: the user, its session epoch and an expiry, under
 * an HMAC of the installation's session key. It is never a session (nothing accepts it but the
 * second step of the sign-in, which still needs a right code), needs no storage, and dies when the
 * user's sessions end (the epoch) or after SECOND_FACTOR_STEP_SECONDS.
 */
export function secondFactorTokens(tokens: Pick<SessionTokens, 'macFor'>, now: () => Date) {
  const seconds = () => Math.floor(now().getTime() / 1000);
  return {
    issue(userId: number, epoch: number): string {
      const body = `${userId}.${epoch}.${seconds() + SECOND_FACTOR_STEP_SECONDS}`;
      return `${body}.${tokens.macFor('second-factor', body)}`;
    },

    /** The user and epoch of a genuine, unexpired token; undefined for anything else. */
    verify(token: string): { userId: number; epoch: number } | undefined {
      const match = TOKEN.exec(token);
      if (!match) return undefined;
      const [, userId, epoch, expires, mac] = match as unknown as string[];
      const expected = Buffer.from(tokens.macFor('second-factor', `${userId}.${epoch}.${expires}`));
      if (!timingSafeEqual(expected, Buffer.from(mac as string))) return undefined;
      if (Number(expires) < seconds()) return undefined;
      return { userId: Number(userId), epoch: Number(epoch) };
    },
  };
}
