import { apiKeyMatches } from './api-keys.js';
import type { Clock } from './clock.js';
import { Unauthorized } from './errors.js';
import type { Lockout } from './lockout.js';
import { verifyPassword } from './passwords.js';
import type { User } from './records.js';
import { REFRESH_AFTER_SECONDS, SESSION_COOKIE, type SessionClaims, type SessionTokens } from './sessions.js';
import type { CacheEntry, VerificationCache, Verified } from '../cache/verification-cache.js';
import type { RevokedSessionsRepository } from '../store/revoked-sessions-repository.js';
import type { UsersRepository } from '../store/users-repository.js';

export interface Authenticated {
  user: User;
  /** Present when the request came with the session cookie. */
  session?: SessionClaims;
  /** A cookie value to send back: a new session after a credential login, or a refreshed one. */
  sessionToken?: string;
}

export interface Credentials {
  authorization?: string;
  cookie?: string;
  /** The connection the request came on (any object that lives as long as it), if there is one. */
  connection?: object;
}

/** The last Basic answer given on one connection, and what it rested on. */
interface ConnectionAnswer {
  authorization: string;
  entry: CacheEntry;
  answer: Authenticated;
  /** When to stop: the entry's expiry, or sooner so the cookie handed out is never staler than a refresh. */
  until: number;
}

/** Equality of two strings in time that depends only on their length. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** Longest login or email accepted in credentials; longer ones are refused without a lookup. */
const MAX_LOGIN_LENGTH = 254;

/** `Basic <base64(login:password)>`; undefined when the header is not that. */
export function parseBasicCredentials(header: string): { login: string; password: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  // No login or password holds U+0000 (docs/limits.md#nul-characters): refused without a lookup.
  if (decoded.includes('\u0000')) return undefined;
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { login: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface AuthenticatorParts {
  users: UsersRepository;
  revokedSessions: RevokedSessionsRepository;
  sessions: SessionTokens;
  cache: VerificationCache;
  lockout: Lockout;
  clock: Clock;
}

/**
 * Who is asking: HTTP Basic (login or email, with the password or the API key) when an Authorization
 * header is present, else the session cookie. Anything else, or a user who is not active, is
 * Unauthorized; too many failures for a login or from an address is TooManyRequests.
 */
export function authenticator({ users, revokedSessions, sessions, cache, lockout, clock }: AuthenticatorParts) {
  async function withBasic(authorization: string, address: string): Promise<Verified> {
    const credentials = parseBasicCredentials(authorization);
    if (!credentials || credentials.login.length > MAX_LOGIN_LENGTH) throw new Unauthorized();
    const since = cache.generation;
    const found = await users.findCredentials(credentials.login);
    // Attempts count against the account whichever name (login or email) was used.
    const keys = lockout.keys(found ? `user:${found.user.id}` : credentials.login, address);
    await lockout.charge(keys);
    const { password } = credentials;
    const valid = apiKeyMatches(password, found?.api_key_hash ?? null) || (await verifyPassword(found?.password_hash, password));
    if (!found || !valid || found.user.status !== 'active') {
      // Someone is guessing: the account's cached verifications go, so a lock holds for them too.
      if (found) cache.evictUser(found.user.id);
      throw new Unauthorized();
    }
    await lockout.succeeded(keys);
    const verified = { user: found.user, sessionEpoch: found.session_epoch };
    cache.set(authorization, verified, since);
    return verified;
  }

  // Checks under way, by Authorization header. A client that sends the same credentials on many
  // connections at once (or again just as its cached check expires) waits for the one check instead
  // of starting its own: one password hash, and one attempt against the brute-force limit.
  const checksUnderWay = new Map<string, Promise<Verified>>();

  function withBasicOnce(authorization: string, address: string): Promise<Verified> {
    let check = checksUnderWay.get(authorization);
    if (check === undefined) {
      check = withBasic(authorization, address).finally(() => checksUnderWay.delete(authorization));
      checksUnderWay.set(authorization, check);
    }
    return check;
  }

  const sessionCacheKey = (claims: SessionClaims) => `session ${claims.sessionId} ${claims.epoch}`;
  const withClaims = (user: User, claims: SessionClaims): Authenticated => ({
    user,
    session: claims,
    sessionToken: sessions.needsRefresh(claims) ? sessions.refresh(claims) : undefined,
  });

  async function withSession(claims: SessionClaims): Promise<Authenticated> {
    const since = cache.generation;
    const [found, revoked] = await Promise.all([users.findWithSessionEpoch(claims.userId), revokedSessions.isRevoked(claims.sessionId)]);
    if (!found || revoked || found.session_epoch !== claims.epoch || found.user.status !== 'active') throw new Unauthorized();
    cache.set(sessionCacheKey(claims), { user: found.user, sessionEpoch: found.session_epoch }, since);
    return withClaims(found.user, claims);
  }

  // A keep-alive client resends the same Authorization header on every request of its connection.
  // Recognising it by comparing with the header it sent last (in constant time) skips the HMAC of
  // the cache key, and the connection keeps the session it was given instead of a new one per
  // request. Held only while the connection is open (a WeakMap), the cache entry is current, and at
  // most a cookie refresh period (ConnectionAnswer.until).
  const lastOnConnection = new WeakMap<object, ConnectionAnswer>();

  /** A new session for verified Basic credentials, kept for the connection while `entry` is current. */
  function answerBasic(authorization: string, connection: object | undefined, verified: Verified, entry: CacheEntry | undefined): Authenticated {
    const answer = { user: verified.user, sessionToken: sessions.issue(verified.user.id, verified.sessionEpoch) };
    if (connection && entry) {
      const until = Math.min(entry.expiresAt, clock().getTime() + REFRESH_AFTER_SECONDS * 1000);
      lastOnConnection.set(connection, { authorization, entry, answer, until });
    }
    return answer;
  }

  function fromBasicCache(authorization: string, connection: object | undefined): Authenticated | undefined {
    const last = connection && lastOnConnection.get(connection);
    if (last) {
      if (last.entry.current && last.until > clock().getTime() && sameText(authorization, last.authorization)) return last.answer;
      // Nothing to reuse: the header it holds goes now, not when the connection closes.
      lastOnConnection.delete(connection);
    }
    const entry = cache.lookup(authorization);
    return entry && answerBasic(authorization, connection, entry.verified, entry);
  }

  /** The answer from the verification cache alone, without I/O; undefined when it must be checked. */
  function fromCache(credentials: Credentials): Authenticated | undefined {
    if (credentials.authorization !== undefined) return fromBasicCache(credentials.authorization, credentials.connection);
    const token = readCookie(credentials.cookie, SESSION_COOKIE);
    const claims = token === undefined ? undefined : sessions.verify(token);
    const cached = claims && cache.get(sessionCacheKey(claims));
    return cached && claims && withClaims(cached.user, claims);
  }

  return {
    fromCache,

    /**
     * The full check against the database (and the password hash), after fromCache had nothing.
     * `address` is the client's, for brute-force counting.
     */
    async authenticate(credentials: Credentials, address: string): Promise<Authenticated> {
      const { authorization, connection } = credentials;
      if (authorization !== undefined) {
        const verified = await withBasicOnce(authorization, address);
        return answerBasic(authorization, connection, verified, cache.lookup(authorization));
      }
      const token = readCookie(credentials.cookie, SESSION_COOKIE);
      const claims = token === undefined ? undefined : sessions.verify(token);
      if (!claims) throw new Unauthorized();
      return withSession(claims);
    },

    /** Ends one session (logout); other sessions of the user go on. */
    async endSession(claims: SessionClaims, now: Date): Promise<void> {
      await revokedSessions.revoke(claims.sessionId, sessions.expiresAt(claims), now);
      cache.credentialsChanged(claims.userId);
    },
  };
}

export type Authenticator = ReturnType<typeof authenticator>;
