import type { AuditRecorder } from '../audit/audit-trail.js';
import type { AuditActor } from '../audit/audit-event.js';
import { hashApiKey } from './api-keys.js';
import { type Clock, millisOf } from '../shared/clock.js';
import { BadGateway, Forbidden, Unauthorized } from '../shared/problems.js';
import { type AllowedAddressesOf, isAllowedFrom, refuseUnlessAllowed } from './allowed-addresses.js';
import type { SignInNote } from './last-access-log.js';
import { type Lockout, LockedOut } from './lockout.js';
import { verifyPassword } from './passwords.js';
import type { User } from './user.js';
import { REFRESH_AFTER_SECONDS, SESSION_COOKIE, type SessionClaims, type SessionTokens } from './sessions.js';
import type { CacheEntry, VerificationCache, Verified } from './verification-cache.js';
import type { RevokedSessionsRepository } from './revoked-sessions.store.js';
import type { UsersRepository } from './users.store.js';
import { EMAIL, LOGIN } from './users.service.js';

export interface Authenticated {
  user: User;
  /** Present when the request came with the session cookie. */
  session?: SessionClaims;
  /** A cookie value to send back: a new session after a credential login, or a refreshed one. */
  sessionToken?: string;
  /** The API key the request came with (HTTP Basic), whose use is recorded (users/api-key-usage.ts). */
  apiKeyId?: number;
}

export interface Credentials {
  authorization?: string;
  cookie?: string;
  /** The connection the request came on (any object that lives as long as it), if there is one. */
  connection?: object;
  /** The User-Agent header, for the last access log (users/last-access-log.ts). */
  userAgent?: string | undefined;
}

/**
 * What a verified Basic credential is remembered under: the header and the client's address. A
 * verification holds only for the address it was made from, so a guesser whom the lockout refuses
 * does not get the right password answered from the cache (docs/security.md#brute-force).
 */
const basicKey = (authorization: string, address: string) => `${authorization}\n${address}`;

/** The last answer given on one connection from the verification cache, and what it rested on. */
interface ConnectionAnswer {
  /** The header it answered, and that header's text. */
  header: 'authorization' | 'cookie';
  text: string;
  address: string;
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

/** Why HTTP Basic with the password of an account with a second factor is refused (docs/security.md#second-factor). */
export const SECOND_FACTOR_REFUSAL = 'This account has a second factor: use one of its API keys, or sign in to the console';

/**
 * signIn's answer for an account with a second factor: the password was right, the code is due
 * (an Unauthorized, so a caller that does not ask for the code refuses the sign-in).
 */
export class SecondFactorDue extends Unauthorized {
  constructor(readonly user: User, readonly sessionEpoch: number) {
    super('The code of the second factor is needed');
  }
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

/**
 * A directory that vouches for passwords cmi does not keep (identity/identity-directory.ts wires LDAP
 * here: docs/sso-ldap.md). Asked only for a login whose account has no cmi password, or no account.
 */
export interface PasswordDirectory {
  /**
   * The active account the directory vouches for with this login and password (linked, created or
   * re-mapped by the identity provider's sign-in), or undefined when no directory does. `basic`: the
   * API's HTTP Basic, which only directories allowing it answer. Unauthorized with a message when a
   * directory vouched but cmi refuses the account; BadGateway when no directory could be asked.
   */
  verify(login: string, password: string, address: string, basic: boolean): Promise<User | undefined>;
}

export interface AuthenticatorParts {
  users: UsersRepository;
  revokedSessions: RevokedSessionsRepository;
  sessions: SessionTokens;
  cache: VerificationCache;
  lockout: Lockout;
  clock: Clock;
  /** Told of each request an API key authenticated, cached or not (its `last_used_at`). */
  apiKeyUsed?: (apiKeyId: number) => void;
  /** Where sign-ins and sign-outs are recorded (docs/security.md#the-audit-trail). */
  audit: AuditRecorder;
  /** Each user's allowed addresses, read with every verification (docs/security.md#allowed-addresses); none: any address. */
  allowedAddresses?: AllowedAddressesOf;
  /** Told of each verification of a known user's credentials, right or refused (docs/security.md#the-last-access-log). */
  signedIn?: (note: SignInNote) => void;
  /** Told when a known user's name is locked by the lockout, and until when (users/account-unlock.ts mails the unlock link). */
  accountLocked?: (user: User, until: Date) => void;
}

/** A credential verified as the password path sees it: the account, its epoch, and how the password was proved. */
interface PasswordVerified {
  user: User;
  sessionEpoch: number;
}

/**
 * Who is asking: HTTP Basic (login or email, with the password or the API key) when an Authorization
 * header is present, else the session cookie. Anything else, or a user who is not active, is
 * Unauthorized; too many failures for a login or from an address is TooManyRequests.
 */
export function authenticator({ users, revokedSessions, sessions, cache, lockout, clock, audit, apiKeyUsed = () => {}, allowedAddresses = () => Promise.resolve(undefined), signedIn = () => {}, accountLocked = () => {} }: AuthenticatorParts) {
  const nowMs = millisOf(clock);
  // Set by the composition root once the identity providers are made (app/app.ts); none: cmi's passwords only.
  let directory: PasswordDirectory | undefined;

  /**
   * The password checked: against the account's own hash when it has one, else (no account, or one
   * an identity provider made without a cmi password) by the directory. Undefined when refused.
   */
  async function passwordHolder(found: Awaited<ReturnType<UsersRepository['findCredentials']>>, login: string, password: string, basic: boolean, address: string): Promise<PasswordVerified | undefined> {
    const ownPassword = found !== undefined && found.password_hash !== '';
    if (ownPassword || directory === undefined) {
      return (await verifyPassword(found?.password_hash, password)) && found && found.user.status === 'active' ? { user: found.user, sessionEpoch: found.session_epoch } : undefined;
    }
    // Only the login in its one form reaches the directory (which may take `LEE`, ` lee` or a full-width
    // `ｌｅｅ` for `lee`): every variant would be counted apart by the lockout. And the time of a password
    // hash is spent whatever the directory answers, so an unknown login takes as long as a known one.
    const canonical = login.normalize('NFKC').trim().toLowerCase() === login.toLowerCase() && (LOGIN.test(login) || EMAIL.test(login));
    const [user] = await Promise.all([canonical ? directory.verify(login, password, address, basic) : undefined, verifyPassword(undefined, password)]);
    const vouched = user === undefined ? undefined : await users.findWithSessionEpoch(user.id);
    return vouched && vouched.user.status === 'active' ? { user: vouched.user, sessionEpoch: vouched.session_epoch } : undefined;
  }
  /**
   * A login (or email) and a password, under the lockout; with `acceptApiKey`, the API key may stand
   * for the password (HTTP Basic), never on the console's sign-in form (docs/console.md#security).
   */
  async function verifyLogin(credentials: { login: string; password: string }, address: string, acceptApiKey: boolean, userAgent?: string): Promise<Verified> {
    const { password } = credentials;
    // One of the user's API keys is the one whose SHA-256 the database finds beside the user
    // (docs/security.md#api-keys); the hash is computed for every Basic credential.
    const found = await users.findCredentials(credentials.login, acceptApiKey ? hashApiKey(password) : undefined);
    // Counted under the name as typed, whether or not it found a user, so a 429 tells nothing.
    const attempt = lockout.attempt(credentials.login, address, found?.user.id);
    // Each verification of a known user, right or refused, goes to its last access log (noted, written apart).
    const note = (success: boolean, credential: SignInNote['credential'] = acceptApiKey ? 'password' : 'console') => {
      if (found) signedIn({ userId: found.user.id, address, credential, userAgent, success });
    };
    // The API key first: it cannot be guessed, so password guessing never locks it (nor is it counted).
    if (acceptApiKey && found && found.api_key_id !== null) {
      note(found.user.status === 'active', 'api_key');
      if (found.user.status !== 'active') throw new Unauthorized();
      await lockout.apiKeyAccepted(attempt);
      return { user: found.user, sessionEpoch: found.session_epoch, apiKeyId: found.api_key_id, allowedFrom: await allowedAddresses(found.user.id) };
    }
    const refused = (error: unknown): never => {
      // The lockout's refusals are not written: they come without a password check, and a stranger
      // sending them against a locked name would push the account's real sign-ins out of its log.
      if (!(error instanceof LockedOut)) note(false);
      if (found && error instanceof LockedOut && error.nameLockedUntil > 0) accountLocked(found.user, new Date(error.nameLockedUntil));
      throw error;
    };
    const charged = await lockout.charge(attempt).catch(refused);
    const failed = async (error: Unauthorized | BadGateway = new Unauthorized()): Promise<never> => {
      // Answered once the failure is counted in the database (a 503 while it cannot be).
      await lockout.failed(charged).catch(refused);
      note(false);
      // The owner's cached verification stays: it is keyed by its header and address, so a guess
      // can never match it, and dropping it would make each guess cost the owner a fresh check.
      throw error;
    };
    const holder = await passwordHolder(found, credentials.login, password, acceptApiKey, address).catch((error: unknown) => {
      if (error instanceof Unauthorized || error instanceof BadGateway) return failed(error);
      throw error;
    });
    if (holder === undefined) return failed();
    const { user } = holder;
    // The password is right, but alone it is not enough for an account with a second factor
    // (docs/security.md#second-factor): it stays counted as a failure, and only a right code counts as a
    // success (two-factor.service.ts), so a known password never wipes the count of wrong codes.
    if (user.totp_enabled) await lockout.failed(charged).catch(refused);
    else await lockout.succeeded(charged);
    if (acceptApiKey && user.totp_enabled) {
      note(false);
      throw new Unauthorized(SECOND_FACTOR_REFUSAL);
    }
    note(true);
    return { user, sessionEpoch: holder.sessionEpoch, allowedFrom: await allowedAddresses(user.id) };
  }

  /**
   * 403 (audited) when `verified`'s allowed addresses do not hold `address` (docs/security.md#allowed-addresses):
   * asked only once the password or key was right, so the list tells a guesser nothing.
   */
  const refuseUnlessAllowedFrom = (verified: Verified, address: string, requestId?: string) =>
    refuseUnlessAllowed(audit, verified.user, verified.allowedFrom, address, verified.apiKeyId === undefined ? 'password' : 'api_key', requestId);

  async function withBasic(authorization: string, address: string, since: number, userAgent?: string): Promise<Verified> {
    const credentials = parseBasicCredentials(authorization);
    if (!credentials || credentials.login.length > MAX_LOGIN_LENGTH) throw new Unauthorized();
    const verified = await verifyLogin(credentials, address, true, userAgent);
    // Stored even when the address is refused: the next request from there is refused from the entry, without the password hash.
    cache.set(basicKey(authorization, address), verified, since);
    await refuseUnlessAllowedFrom(verified, address);
    return verified;
  }

  // Checks under way, by Authorization header and address, with the cache's generation when each
  // began. A client that sends the same credentials on many connections at once (or again while its
  // cached check is checked again) waits for the one check instead of starting its own: one password
  // hash, and one attempt against the brute-force limit. Not a check that began before credentials
  // last changed: it may have read what the change undid, so a request after the change starts anew.
  const checksUnderWay = new Map<string, { since: number; check: Promise<Verified> }>();

  function withBasicOnce(authorization: string, address: string, userAgent?: string): Promise<Verified> {
    const key = basicKey(authorization, address);
    const since = cache.generation;
    const underWay = checksUnderWay.get(key);
    if (underWay !== undefined && underWay.since === since) return underWay.check;
    const check = withBasic(authorization, address, since, userAgent).finally(() => {
      if (checksUnderWay.get(key)?.check === check) checksUnderWay.delete(key);
    });
    checksUnderWay.set(key, { since, check });
    return check;
  }

  /**
   * Checks a Basic credential in use again before its verification expires, off the request path
   * (docs/security.md#the-verification-cache): the requests meanwhile are answered from the entry,
   * which still holds, and none waits for the password hash when it expires. A success stores a new
   * entry (unless credentials changed meanwhile, as any check); a refusal drops the user's entries at
   * once, sooner than their expiry; anything else (the lockout's 429, a 503) leaves the entry to its
   * expiry, after which a request is checked on its path as before.
   */
  function refreshBasic(authorization: string, address: string, entry: CacheEntry, userAgent?: string): void {
    withBasicOnce(authorization, address, userAgent).catch((error: unknown) => {
      if (error instanceof Unauthorized || error instanceof Forbidden) cache.credentialsChanged(entry.verified.user.id);
    });
  }

  const sessionCacheKey = (claims: SessionClaims) => `session ${claims.sessionId} ${claims.epoch}`;
  const withClaims = (user: User, claims: SessionClaims): Authenticated => ({
    user,
    session: claims,
    sessionToken: sessions.needsRefresh(claims) ? sessions.refresh(claims) : undefined,
  });

  async function withSession(claims: SessionClaims, address: string): Promise<Authenticated> {
    const since = cache.generation;
    const [found, revoked, allowedFrom] = await Promise.all([users.findWithSessionEpoch(claims.userId), revokedSessions.isRevoked(claims.sessionId), allowedAddresses(claims.userId)]);
    if (!found || revoked || found.session_epoch !== claims.epoch || found.user.status !== 'active') throw new Unauthorized();
    await refuseUnlessAllowed(audit, found.user, allowedFrom, address, 'session');
    cache.set(sessionCacheKey(claims), { user: found.user, sessionEpoch: found.session_epoch, allowedFrom }, since);
    return withClaims(found.user, claims);
  }

  // A keep-alive client resends the same Authorization or Cookie header on every request of its
  // connection. Recognising it by comparing with the header it sent last (in constant time) skips the
  // HMACs of the cache key and of the session token, and a Basic connection keeps the session it was
  // given instead of a new one per request. Held only while the connection is open (a WeakMap), the
  // cache entry is current, and at most until the session cookie would be refreshed
  // (ConnectionAnswer.until).
  const lastOnConnection = new WeakMap<object, ConnectionAnswer>();

  /** What was last answered on `connection`, when it came from this very header and address and still holds at `now`. */
  function answeredOnConnection(connection: object | undefined, header: ConnectionAnswer['header'], text: string, address: string, now: number): ConnectionAnswer | undefined {
    const last = connection && lastOnConnection.get(connection);
    if (!last) return undefined;
    // The address too: behind a proxy, one connection carries many clients' requests.
    if (last.header === header && last.until > now && cache.holds(last.entry, now) && address === last.address && sameText(text, last.text)) return last;
    // Nothing to reuse: the header it holds goes now, not when the connection closes.
    lastOnConnection.delete(connection);
    return undefined;
  }

  /** A new session for verified Basic credentials, kept for the connection while `entry` is current. */
  function answerBasic(authorization: string, address: string, connection: object | undefined, verified: Verified, entry: CacheEntry | undefined, now = nowMs()): Authenticated {
    const answer: Authenticated = { user: verified.user, sessionToken: sessions.issue(verified.user.id, verified.sessionEpoch) };
    if (verified.apiKeyId !== undefined) answer.apiKeyId = verified.apiKeyId;
    if (connection && entry) {
      const until = Math.min(entry.expiresAt, now + REFRESH_AFTER_SECONDS * 1000);
      lastOnConnection.set(connection, { header: 'authorization', text: authorization, address, entry, answer, until });
    }
    return answer;
  }

  function fromBasicCache(authorization: string, address: string, connection: object | undefined, userAgent?: string): Authenticated | undefined {
    const now = nowMs();
    const again = answeredOnConnection(connection, 'authorization', authorization, address, now);
    const entry = again?.entry ?? cache.lookup(basicKey(authorization, address));
    // A list added since is heard as a credentials change (the entry goes); this holds for the address too.
    if (entry === undefined || !isAllowedFrom(entry.verified.allowedFrom, address)) return undefined;
    if (cache.refreshDue(entry, now)) refreshBasic(authorization, address, entry, userAgent);
    return again?.answer ?? answerBasic(authorization, address, connection, entry.verified, entry, now);
  }

  function fromSessionCache(cookie: string | undefined, address: string, connection: object | undefined): Authenticated | undefined {
    const again = cookie === undefined ? undefined : answeredOnConnection(connection, 'cookie', cookie, address, nowMs())?.answer;
    if (again) return again;
    const token = readCookie(cookie, SESSION_COOKIE);
    const claims = token === undefined ? undefined : sessions.verify(token);
    const entry = claims && cache.lookup(sessionCacheKey(claims));
    // From an address the user's list does not hold: checked against the database, refused there (withSession).
    if (!claims || !entry || !isAllowedFrom(entry.verified.allowedFrom, address)) return undefined;
    const answer = withClaims(entry.verified.user, claims);
    // Kept until the token would be refreshed; a refreshed answer too, while the cookie sent is still
    // accepted and until the new token would itself be refreshed: a client that keeps sending the old
    // cookie (a script that ignores Set-Cookie) is answered the same new token again, not a new HMAC and
    // a new token on every request (its lastSeen is then as stale as a refresh allows, no more).
    if (connection && cookie !== undefined) {
      const refreshedAt = (answer.sessionToken === undefined ? claims.lastSeen : Math.floor(nowMs() / 1000)) * 1000;
      const until = Math.min(entry.expiresAt, refreshedAt + REFRESH_AFTER_SECONDS * 1000, sessions.acceptedUntil(claims));
      lastOnConnection.set(connection, { header: 'cookie', text: cookie, address, entry, answer, until });
    }
    return answer;
  }

  /** The answer from the verification cache as it stands, without I/O; undefined when it must be checked. */
  function cachedAnswer(credentials: Credentials, address: string): Authenticated | undefined {
    if (credentials.authorization !== undefined) return fromBasicCache(credentials.authorization, address, credentials.connection, credentials.userAgent);
    return fromSessionCache(credentials.cookie, address, credentials.connection);
  }

  /**
   * The answer from the verification cache alone, without I/O; undefined when it must be checked, or
   * when the cache must first hear of other processes' changes (authenticate waits for that).
   * `address` is the client's: a Basic credential is remembered for the address it was verified from.
   */
  function fromCache(credentials: Credentials, address: string): Authenticated | undefined {
    const answer = cachedAnswer(credentials, address);
    if (answer === undefined || cache.othersHeard() !== undefined) return undefined;
    return used(answer);
  }

  /** `answer`, once the use of the API key it came with is noted. */
  function used(answer: Authenticated): Authenticated {
    if (answer.apiKeyId !== undefined) apiKeyUsed(answer.apiKeyId);
    return answer;
  }

  return {
    fromCache,

    /**
     * The full check against the database (and the password hash), after fromCache had nothing.
     * `address` is the client's, for brute-force counting.
     */
    async authenticate(credentials: Credentials, address: string): Promise<Authenticated> {
      // A change another process committed before this request came must be seen before the cache
      // answers it (docs/security.md#suspend-now-means-now): on PostgreSQL, one round trip on the
      // listening connection, shared by the requests of one turn of the event loop.
      // Only a request the cache could answer waits; any other is checked against the database below.
      const heard = cachedAnswer(credentials, address) === undefined ? undefined : cache.othersHeard();
      if (heard !== undefined) {
        await heard;
        const cached = cachedAnswer(credentials, address);
        if (cached) return used(cached);
      }
      const { authorization, connection } = credentials;
      if (authorization !== undefined) {
        // Verified here before, at an address the user's list does not hold: refused without the password hash.
        const refusedEntry = cache.lookup(basicKey(authorization, address));
        if (refusedEntry !== undefined) await refuseUnlessAllowedFrom(refusedEntry.verified, address);
        const verified = await withBasicOnce(authorization, address, credentials.userAgent);
        return used(answerBasic(authorization, address, connection, verified, cache.lookup(basicKey(authorization, address))));
      }
      const token = readCookie(credentials.cookie, SESSION_COOKIE);
      const claims = token === undefined ? undefined : sessions.verify(token);
      if (!claims) throw new Unauthorized();
      return withSession(claims, address);
    },

    /**
     * The console's sign-in form: a login or email and a password (never an API key), under the same
     * lockout as HTTP Basic; answers a new session of the console's side (sessions.ts SessionAudience),
     * which the API's cookie refuses. Unauthorized or TooManyRequests otherwise.
     */
    async signIn(login: string, password: string, address: string, requestId?: string, userAgent?: string): Promise<Authenticated & { sessionToken: string }> {
      if (login === '' || login.length > MAX_LOGIN_LENGTH || login.includes('\u0000') || password.includes('\u0000')) throw new Unauthorized();
      const verified = await verifyLogin({ login, password }, address, false, userAgent);
      await refuseUnlessAllowedFrom(verified, address, requestId);
      const { user } = verified;
      // The code is asked next (console/sign-in.routes.ts), and completeSignIn issues the session.
      if (user.totp_enabled) throw new SecondFactorDue(user, verified.sessionEpoch);
      await audit.record({ id: user.id, login: user.login, credential: 'password', address, ...(requestId === undefined ? {} : { requestId }) }, { action: 'session.create', target_type: 'user', target_id: user.id, changes: {} });
      return { user, sessionToken: sessions.issue(user.id, verified.sessionEpoch, 'console') };
    },

    /** Where passwords cmi does not keep are checked (the identity providers' LDAP directories: app/app.ts). */
    useDirectory(passwords: PasswordDirectory): void {
      directory = passwords;
    },

    /**
     * The console's session for the account an identity provider vouched for through the browser
     * (OpenID Connect, SAML: docs/security.md#identity-providers), under the same rules as a password:
     * active, from an allowed address, and the code asked next for an account with a second factor.
     */
    async signInVouched(userId: number, address: string, requestId?: string, userAgent?: string): Promise<Authenticated & { sessionToken: string }> {
      const found = await users.findWithSessionEpoch(userId);
      if (!found || found.user.status !== 'active') throw new Unauthorized();
      const { user } = found;
      await refuseUnlessAllowed(audit, user, await allowedAddresses(user.id), address, 'sso', requestId);
      signedIn({ userId: user.id, address, credential: 'sso', userAgent, success: true });
      if (user.totp_enabled) throw new SecondFactorDue(user, found.session_epoch);
      await audit.record({ id: user.id, login: user.login, credential: 'sso', address, ...(requestId === undefined ? {} : { requestId }) }, { action: 'session.create', target_type: 'user', target_id: user.id, changes: {} });
      return { user, sessionToken: sessions.issue(user.id, found.session_epoch, 'console') };
    },

    /** The user of an id, for the sign-in's second step (never a credential). */
    userOf: (userId: number): Promise<User | undefined> => users.findById(userId),

    /**
     * The console's session for a user whose password signIn verified and whose code was then right
     * (the second step, docs/security.md#second-factor): Unauthorized when the user is no longer active
     * or its sessions ended since (the epoch).
     */
    async completeSignIn(userId: number, epoch: number, address: string, requestId?: string): Promise<Authenticated & { sessionToken: string }> {
      const found = await users.findWithSessionEpoch(userId);
      if (!found || found.session_epoch !== epoch || found.user.status !== 'active') throw new Unauthorized();
      const { user } = found;
      await audit.record({ id: user.id, login: user.login, credential: 'password', address, ...(requestId === undefined ? {} : { requestId }) }, { action: 'session.create', target_type: 'user', target_id: user.id, changes: { second_factor: true } });
      return { user, sessionToken: sessions.issue(user.id, epoch, 'console') };
    },

    /**
     * A token of the console's own cookie (issued by signIn; never one of the API's `_cmi_session`):
     * from the verification cache when it holds, else checked against the database like the API's cookie.
     */
    async session(token: string, address: string): Promise<Authenticated> {
      const claims = sessions.verify(token, 'console');
      if (!claims) throw new Unauthorized();
      await cache.othersHeard();
      const entry = cache.lookup(sessionCacheKey(claims));
      return entry && isAllowedFrom(entry.verified.allowedFrom, address) ? withClaims(entry.verified.user, claims) : withSession(claims, address);
    },

    /** Ends one session (logout); other sessions of the user go on. */
    async endSession(claims: SessionClaims, now: Date, actor: AuditActor): Promise<void> {
      await revokedSessions.revoke(claims.sessionId, sessions.expiresAt(claims), now);
      cache.credentialsChanged(claims.userId);
      await audit.record(actor, { action: 'session.delete', target_type: 'user', target_id: claims.userId, changes: {} });
    },
  };
}

export type Authenticator = ReturnType<typeof authenticator>;
