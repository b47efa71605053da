import { createHmac, createSecretKey, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { ServiceUnavailable } from '../shared/problems.js';

export const SESSION_COOKIE = '_cmi_session';

/**
 * Which cookie a token was issued for: the API's `_cmi_session` or the console's `_cmi_console`
 * (docs/security.md#sessions-without-storage). Each is signed for its own side, so a token taken from
 * one cookie is refused as the other.
 */
export type SessionAudience = 'api' | 'console';

export interface SessionClaims {
  userId: number;
  /** The user's session epoch when the token was issued; bumping the epoch revokes every token. */
  epoch: number;
  /** Random id of this session, for ending it alone (logout). */
  sessionId: string;
  /** Unix seconds: login time (absolute timeout) and last refresh (idle timeout). */
  issuedAt: number;
  lastSeen: number;
  /** The side it was issued for; never accepted on the other. */
  audience: SessionAudience;
}

export interface SessionTimeouts {
  /** A session ends this long after login, in seconds, whatever its use. */
  maxAgeSeconds: number;
  /** A session ends after this long without a request, in seconds. */
  idleSeconds: number;
}

/** A new random signing key for the installation (stored in the database, shared by all processes). */
export function newSessionSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** How stale `lastSeen` may get before a request refreshes the cookie (bounds idle-timeout error). */
export const REFRESH_AFTER_SECONDS = 60;

const TOKEN = /^(\d{1,10})\.(\d{1,10})\.([0-9a-f]{32})\.(\d{1,12})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * Session tokens are `<userId>.<epoch>.<sessionId>.<issuedAt>.<lastSeen>.<HMAC-SHA256>`. Checking one
 * needs no storage and issuing or refreshing one writes nothing, so clients that log in on every request
 * cost nothing extra. See docs/security.md.
 */
export function sessionTokens(secret: string, clock: Clock, timeouts: SessionTimeouts) {
  const key = createSecretKey(Buffer.from(secret, 'base64url'));
  const sign = (body: string) => createHmac('sha256', key).update(body).digest('base64url');
  const seconds = () => Math.floor(clock().getTime() / 1000);
  // The API's tokens are signed over their body alone (as before there were two sides, so the cookies
  // of API clients outlive an upgrade); the console's over `console.` and the body. No body starts
  // with a letter, so no MAC of one side is ever the MAC of a token of the other.
  const macOf = (audience: SessionAudience, body: string) => sign(audience === 'api' ? body : `console.${body}`);
  const encode = (c: SessionClaims) => {
    const body = `${c.userId}.${c.epoch}.${c.sessionId}.${c.issuedAt}.${c.lastSeen}`;
    return `${body}.${macOf(c.audience, body)}`;
  };

  return {
    issue(userId: number, epoch: number, audience: SessionAudience = 'api'): string {
      const now = seconds();
      // 122 random bits; randomUUID draws on a buffered entropy pool, so a login costs no syscall.
      return encode({ userId, epoch, sessionId: randomUUID().replaceAll('-', ''), issuedAt: now, lastSeen: now, audience });
    },

    /** The same session, seen now. */
    refresh(claims: SessionClaims): string {
      return encode({ ...claims, lastSeen: seconds() });
    },

    needsRefresh(claims: SessionClaims): boolean {
      return seconds() - claims.lastSeen >= REFRESH_AFTER_SECONDS;
    },

    /** Until when `claims`' token is accepted (either timeout), in epoch milliseconds. */
    acceptedUntil(claims: SessionClaims): number {
      return Math.min(claims.issuedAt + timeouts.maxAgeSeconds, claims.lastSeen + timeouts.idleSeconds) * 1000;
    },

    /** When the session ends at the latest (its absolute timeout). */
    expiresAt(claims: SessionClaims): Date {
      return new Date((claims.issuedAt + timeouts.maxAgeSeconds) * 1000);
    },

    /**
     * The console's CSRF token for this session (docs/console.md#security): an HMAC of the session id
     * under the installation's key, so it needs no storage, differs per session and dies with it.
     */
    csrfToken(claims: SessionClaims): string {
      return sign(`csrf.${claims.sessionId}`);
    },

    /**
     * An HMAC of `text` for `purpose` under the installation's key (the sign-in's second step:
     * users/second-factor-token.ts; the sign-in form's hand-off code: users/sign-in-handoff.ts): signed
     * over `<purpose>.<text>`, so it is never a session's, a console token's or a CSRF token's.
     */
    macFor(purpose: 'second-factor' | 'sign-in', text: string): string {
      return sign(`${purpose}.${text}`);
    },

    /** Whether `given` is this session's CSRF token (compared in constant time). */

    csrfTokenMatches(claims: SessionClaims, given: string): boolean {
      const expected = Buffer.from(sign(`csrf.${claims.sessionId}`));
      const actual = Buffer.from(given);
      return actual.length === expected.length && timingSafeEqual(expected, actual);
    },

    /**
     * The claims of a genuine token of `audience`'s side within both timeouts; undefined for anything
     * else, a token issued for the other side included.
     */
    verify(token: string, audience: SessionAudience = 'api'): SessionClaims | undefined {
      const match = TOKEN.exec(token);
      if (!match) return undefined;
      const [, userId, epoch, sessionId, issuedAt, lastSeen, mac] = match as unknown as string[];
      const expected = Buffer.from(macOf(audience, `${userId}.${epoch}.${sessionId}.${issuedAt}.${lastSeen}`));
      if (!timingSafeEqual(expected, Buffer.from(mac as string))) return undefined;
      const now = seconds();
      const claims = { userId: Number(userId), epoch: Number(epoch), sessionId: sessionId as string, issuedAt: Number(issuedAt), lastSeen: Number(lastSeen), audience };
      if (now - claims.issuedAt > timeouts.maxAgeSeconds || now - claims.lastSeen > timeouts.idleSeconds) return undefined;
      if (claims.issuedAt > now + 60 || claims.lastSeen < claims.issuedAt) return undefined;
      return claims;
    },
  };
}

export type SessionTokens = ReturnType<typeof sessionTokens>;

/** How long to wait before reading the signing key again after the database failed to give it. */
const KEY_RETRY_MS = 1000;

/**
 * Session tokens under the installation's key, read from the database by `readSecret`. A process
 * may start while the database is down (a worker replaced during an outage): until the key is read,
 * every use answers 503, and reading is tried again every second. `loaded` settles after the first
 * try, whatever it gave; `ensureKey()` reads it now if it is missing (readiness waits on it);
 * `stop()` ends the retries.
 */
export function sessionTokensOnceKeyed(readSecret: () => Promise<string>, clock: Clock, timeouts: SessionTimeouts) {
  let keyed: SessionTokens | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const need = (): SessionTokens => {
    if (keyed === undefined) throw new ServiceUnavailable('the session key cannot be read from the database', 1);
    return keyed;
  };
  let reading: Promise<void> | undefined;
  const ensureKey = (): Promise<void> => {
    if (keyed !== undefined) return Promise.resolve();
    reading ??= readSecret()
      .then((secret) => {
        keyed = sessionTokens(secret, clock, timeouts);
      })
      .finally(() => (reading = undefined));
    return reading;
  };
  const tryToRead = async (): Promise<void> => {
    try {
      await ensureKey();
    } catch {
      if (!stopped) retry = setTimeout(() => void tryToRead(), KEY_RETRY_MS).unref();
    }
  };
  const tokens: SessionTokens = {
    issue: (userId, epoch, audience) => need().issue(userId, epoch, audience),
    macFor: (purpose, text) => need().macFor(purpose, text),
    refresh: (claims) => need().refresh(claims),
    needsRefresh: (claims) => need().needsRefresh(claims),
    acceptedUntil: (claims) => need().acceptedUntil(claims),
    expiresAt: (claims) => need().expiresAt(claims),
    verify: (token, audience) => need().verify(token, audience),
    csrfToken: (claims) => need().csrfToken(claims),
    csrfTokenMatches: (claims, given) => need().csrfTokenMatches(claims, given),
  };
  return {
    tokens,
    loaded: tryToRead(),
    ensureKey,
    stop(): void {
      stopped = true;
      clearTimeout(retry);
    },
  };
}
