import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/** The 401 body in each format (docs/api.md#errors). */
export const ACCESS_DENIED_JSON = '{"errors":{"base":["Access denied"]}}';
export const ACCESS_DENIED_XML = '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Access denied</error>\n</errors>\n';

/** The cookie a credential login is answered with, over plain HTTP (docs/security.md#sessions-without-storage). */
export const SESSION_COOKIE = /^_cmi_session=([^;\s]+); path=\/; HttpOnly; SameSite=Lax$/;
/** The cookie a logout is answered with. */
export const CLEARED_COOKIE = '_cmi_session=; Max-Age=0; path=/; HttpOnly; SameSite=Lax';

/**
 * Request headers that send a session token as the session cookie, as a script of cmi's own origin
 * does: with X-Requested-With, which a change made with the cookie needs (docs/security.md#the-session-cookie-and-csrf).
 */
export const withCookie = (token: string) => ({ cookie: `_cmi_session=${token}`, 'x-requested-with': 'test' });
/** The session cookie alone, as a form or an image of another site would send it. */
export const cookieOnly = (token: string) => ({ cookie: `_cmi_session=${token}` });

/** GET `url` from an app in this process (fastify's inject: no socket), with these request headers. */
export function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url, headers });
}

/** The Set-Cookie values of an answer: an inject answer, a raw node:http one or a fetch Response. */
function setCookies(res: { headers: unknown }): string[] {
  if (res.headers instanceof Headers) return res.headers.getSetCookie();
  const value = (res.headers as Record<string, string | string[] | number | undefined>)['set-cookie'];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [String(value)];
}

/** The session token of an answer that sets exactly one cookie, the session cookie in its exact form. */
export function tokenOf(res: { headers: unknown }): string {
  const cookies = setCookies(res);
  assert.equal(cookies.length, 1, `not one Set-Cookie: ${JSON.stringify(cookies)}`);
  const match = SESSION_COOKIE.exec(cookies[0] as string);
  assert.ok(match, `no session cookie in ${cookies[0]}`);
  return match[1] as string;
}

/** A credential login (any GET answers it): asserts 200 and returns the new session's token. */
export async function login(app: FastifyInstance, authorization: string): Promise<string> {
  const res = await get(app, '/version.json', { authorization });
  assert.equal(res.statusCode, 200, res.body);
  return tokenOf(res);
}

/** The exact 401 in JSON (docs/api.md#errors): the Basic challenge, the body, and no cookie. */
export function assertAccessDenied(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(res.headers['www-authenticate'], 'Basic realm="cmi"');
  assert.equal(res.body, ACCESS_DENIED_JSON);
  assert.equal(res.headers['set-cookie'], undefined);
}

/** What `callApi` sends besides the method and path. */
export interface ApiCall { auth?: string; body?: unknown; contentType?: string; headers?: Record<string, string>; from?: string }

/**
 * One request through inject: `auth` as the Authorization header, `body` as JSON (or as it is when a
 * string, with `contentType`), `from` as the client's address.
 */
export function callApi(app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, options: ApiCall = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth !== undefined) headers.authorization = options.auth;
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }), ...(options.from === undefined ? {} : { remoteAddress: options.from }) });
}
