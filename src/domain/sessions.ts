import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from './clock.js';

export const SESSION_COOKIE = '_cmi_session';

export interface SessionClaims {
  userId: number;
  /** The user's session epoch when the token was issued; bumping the epoch revokes every token. */
  epoch: number;
  issuedAt: number;
}

/** A new random signing key for the installation (stored in the database, shared by all processes). */
export function newSessionSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Session tokens are `<userId>.<epoch>.<issuedAt>.<HMAC-SHA256>`: checking one needs no storage and
 * issuing one writes nothing, so clients that log in on every request cost nothing extra.
 */
export function sessionTokens(secret: string, clock: Clock, maxAgeSeconds: number) {
  const key = Buffer.from(secret, 'base64url');
  const sign = (body: string) => createHmac('sha256', key).update(body).digest('base64url');

  return {
    issue(userId: number, epoch: number): string {
      const body = `${userId}.${epoch}.${Math.floor(clock().getTime() / 1000)}`;
      return `${body}.${sign(body)}`;
    },

    /** The claims of a genuine, unexpired token; undefined for anything else. */
    verify(token: string): SessionClaims | undefined {
      const match = /^(\d{1,10})\.(\d{1,10})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
      if (!match) return undefined;
      const [, userId, epoch, issuedAt, mac] = match as unknown as [string, string, string, string, string];
      const expected = Buffer.from(sign(`${userId}.${epoch}.${issuedAt}`));
      if (!timingSafeEqual(expected, Buffer.from(mac))) return undefined;
      const age = clock().getTime() / 1000 - Number(issuedAt);
      if (age < -60 || age > maxAgeSeconds) return undefined;
      return { userId: Number(userId), epoch: Number(epoch), issuedAt: Number(issuedAt) };
    },
  };
}

export type SessionTokens = ReturnType<typeof sessionTokens>;
