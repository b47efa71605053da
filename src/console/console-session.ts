import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClientError } from '../shared/problems.js';

/**
 * The console's own session cookie (docs/console.md#the-session-cookie): the same stateless token as
 * the API's `_cmi_session`, signed for the console's side (a token of either cookie is refused as the
 * other), sent only to /console and never cross-site. The API never reads it, so a page of another
 * site can make no browser send a credential the API accepts without a CSRF token.
 */
export const CONSOLE_COOKIE = '_cmi_console';

/** The form field that carries the CSRF token on every POST of the console. */
export const CSRF_FIELD = '_csrf';

function attributes(request: FastifyRequest): string {
  return `Path=/console; HttpOnly; SameSite=Strict${request.protocol === 'https' ? '; Secure' : ''}`;
}

export function setConsoleCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.header('set-cookie', `${CONSOLE_COOKIE}=${token}; ${attributes(request)}`);
}

export function clearConsoleCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', `${CONSOLE_COOKIE}=; Max-Age=0; ${attributes(request)}`);
}

/** No session, or one that ended: the console answers with the sign-in page (then back to `next`). */
export class SessionEnded extends ClientError {
  readonly status = 401;
  readonly code = 'CMI_ERR_CONSOLE_SESSION_ENDED';
  constructor() {
    super('Your session has ended: sign in again');
  }
}

/** A POST that did not come from a page of this console (cross-site, or without its CSRF token). */
export class CrossSiteRequest extends ClientError {
  readonly status = 403;
  readonly code = 'CMI_ERR_CONSOLE_CROSS_SITE';
  constructor() {
    super('This form did not come from a page of this console (its security token is missing or wrong): reload the page and try again');
  }
}

/**
 * Whether a state-changing request came from this origin, by the headers browsers send
 * (Sec-Fetch-Site, Origin). A request with neither (an old browser, a script) is judged by its CSRF
 * token alone.
 */
export function fromSameOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  return origin === `${request.protocol}://${request.host}`;
}

/**
 * Where to go after signing in: a console path of this site only (never `//host` nor another scheme),
 * in printable ASCII, since it becomes a Location header and Node refuses any other character there
 * (the answer would be a 500 after a right password).
 */
export function safeNext(next: string | undefined): string {
  if (next === undefined || next.length > 2000) return '/console';
  return /^\/console(?:[/?][\x21-\x5b\x5d-\x7e]*)?$/.test(next) && !next.includes('/..') && !next.includes('//') ? next : '/console';
}
