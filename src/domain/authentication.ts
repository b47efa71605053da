import { Unauthorized } from './errors.js';
import { verifyPassword } from './passwords.js';
import type { User } from './records.js';
import { SESSION_COOKIE, type SessionTokens } from './sessions.js';
import type { UsersRepository } from '../store/users-repository.js';

export interface Authenticated {
  user: User;
  /** A fresh session token when the request logged in with credentials. */
  newSessionToken?: string;
}

/** Longest login or email accepted in credentials; longer ones are refused without a lookup. */
const MAX_LOGIN_LENGTH = 254;

/** `Basic <base64(login:password)>`; undefined when the header is not that. */
export function parseBasicCredentials(header: string): { login: string; password: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
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
 * Who is asking: HTTP Basic (login or email, and password) when an Authorization header is present,
 * else the session cookie. Anything else, or a user who is not active, is Unauthorized.
 */
export function authenticator(users: UsersRepository, sessions: SessionTokens) {
  async function withPassword(authorization: string): Promise<Authenticated> {
    const credentials = parseBasicCredentials(authorization);
    if (!credentials || credentials.login.length > MAX_LOGIN_LENGTH) throw new Unauthorized();
    const found = await users.findCredentials(credentials.login);
    const valid = await verifyPassword(found?.password_hash, credentials.password);
    if (!found || !valid || found.user.status !== 'active') throw new Unauthorized();
    return { user: found.user, newSessionToken: sessions.issue(found.user.id, found.session_epoch) };
  }

  async function withSession(token: string): Promise<Authenticated> {
    const claims = sessions.verify(token);
    if (!claims) throw new Unauthorized();
    const found = await users.sessionEpoch(claims.userId);
    if (!found || found.session_epoch !== claims.epoch || found.user.status !== 'active') throw new Unauthorized();
    return { user: found.user };
  }

  return {
    authenticate(headers: { authorization?: string; cookie?: string }): Promise<Authenticated> {
      if (headers.authorization !== undefined) return withPassword(headers.authorization);
      const token = readCookie(headers.cookie, SESSION_COOKIE);
      if (token !== undefined) return withSession(token);
      return Promise.reject(new Unauthorized());
    },
  };
}

export type Authenticator = ReturnType<typeof authenticator>;
