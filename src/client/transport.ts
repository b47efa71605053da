import { readXml } from './xml-reader.js';
import {
  apiErrorClass,
  CmiAbortError,
  CmiApiError,
  CmiConnectionError,
  CmiError,
  CmiProtocolError,
  CmiTimeoutError,
} from './errors.js';
import type { Format } from './records.js';

/** How the client reaches the server (docs/client.md#options). */
export interface TransportOptions {
  baseUrl: string;
  login?: string;
  password?: string;
  /** Sent as the password of HTTP Basic, with `login` (cmi also takes the email there). */
  apiKey?: string;
  format?: Format;
  /** Milliseconds each attempt may take, answer body included (default 60,000). */
  timeout?: number;
  /** Tries after the first, for idempotent requests (default 2). */
  maxRetries?: number;
  /** The longest wait between tries, in milliseconds (default 30,000); a longer `Retry-After` is not waited for. */
  maxRetryDelay?: number;
  /** The first backoff in milliseconds, doubled each try, with jitter (default 500). */
  initialRetryDelay?: number;
  /** The largest answer body read, in bytes (default 64 MiB); a longer one is a `CmiProtocolError`. */
  maxResponseBytes?: number;
  fetch?: typeof fetch;
  /** Merged into every `fetch` call, e.g. `{ dispatcher }` of undici. */
  fetchOptions?: RequestInit & Record<string, unknown>;
}

export type Query = Record<string, string | number | boolean | Date | undefined>;

export interface RequestOptions {
  /** Aborts the call (all its tries); a `CmiAbortError` is thrown. */
  signal?: AbortSignal;
  /** Overrides the client's `timeout` for this call. */
  timeout?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The body read in the client's format: JSON's value, or the XML root's name and value. */
  body: unknown;
  rootName?: string;
}

const RETRIED_STATUSES = new Set([408, 429, 502, 503, 504]);
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);
const SESSION_COOKIE = '_cmi_session';

/** `Retry-After` in seconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  // An HTTP date starts with the day's name (`Wed, 21 Oct 2015 07:28:00 GMT`); V8's Date.parse reads
  // far more (`-5` and `1.5` as days of 2001, which would mean "now" and skip the backoff).
  if (!/^[A-Za-z]{3}[, ]/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

function queryString(query: Query | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    params.append(name, value instanceof Date ? value.toISOString() : String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** A URL's path and query, for messages. */
const path = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new CmiAbortError('aborted by the caller'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new CmiAbortError('aborted by the caller'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * The body as text, refused past `limit` bytes: a hostile or broken server streaming without end would
 * otherwise fill the memory (`response.text()` has no limit).
 */
async function boundedText(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '');
  const tooLong = () => new CmiProtocolError(`the answer is longer than maxResponseBytes (${limit} bytes); refused`);
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLong();
  }
  if (response.body === null) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLong();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, length).toString('utf8');
}

/** The words of a network failure: undici hides the cause (ECONNREFUSED, a reset socket) under `fetch failed`. */
function networkProblem(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/**
 * One HTTP exchange with retries, timeouts and the session cookie (docs/client.md#retries-and-timeouts):
 * credentials go as HTTP Basic until the server sets `_cmi_session`, then the cookie alone; when the
 * session ends (a 401 to the cookie), the call is made again once with the credentials.
 */
export function transport(options: TransportOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const format: Format = options.format ?? 'json';
  const doFetch = options.fetch ?? globalThis.fetch;
  const secret = options.apiKey ?? options.password;
  const basic = options.login !== undefined && secret !== undefined ? `Basic ${Buffer.from(`${options.login}:${secret}`).toString('base64')}` : undefined;
  const maxRetryDelay = options.maxRetryDelay ?? 30_000;
  const maxResponseBytes = options.maxResponseBytes ?? 64 * 1024 * 1024;
  const initialRetryDelay = options.initialRetryDelay ?? 500;
  let session: string | undefined;

  function keepSession(headers: Headers): void {
    for (const cookie of headers.getSetCookie()) {
      const match = new RegExp(`^${SESSION_COOKIE}=([^;]*)`).exec(cookie);
      if (match === null) continue;
      const ended = match[1] === '' || /;\s*max-age=0\b/i.test(cookie);
      session = ended ? undefined : match[1];
    }
  }

  function readBody(text: string, contentType: string | null): { body: unknown; rootName?: string } {
    if (text === '') return { body: undefined };
    if (contentType?.includes('xml') || (contentType === null && format === 'xml')) {
      const { name, value } = readXml(text);
      return { body: value, rootName: name };
    }
    try {
      return { body: JSON.parse(text) as unknown };
    } catch {
      throw new CmiProtocolError(`the answer is not JSON (content-type ${contentType ?? 'none'}): ${text.slice(0, 200)}`);
    }
  }

  function apiError(answer: Answer): CmiApiError {
    let errors: Record<string, string[]> = {};
    const body = answer.body as Record<string, unknown> | undefined;
    if (answer.rootName === 'errors') {
      // XML: <errors><error>Login has already been taken</error></errors>, full messages only.
      const value = answer.body as Record<string, unknown> | string;
      const messages = typeof value === 'object' && value !== null ? Object.values(value).flat() : [value];
      errors = { base: messages.filter((m): m is string => typeof m === 'string' && m !== '') };
    } else if (body !== undefined && typeof body.errors === 'object' && body.errors !== null) {
      errors = body.errors as Record<string, string[]>;
    }
    const ErrorClass = apiErrorClass(answer.status);
    return new ErrorClass(answer.status, errors, answer.headers, retryAfterSeconds(answer.headers));
  }

  /** One try: the answer, or a CmiConnectionError / CmiTimeoutError / CmiAbortError. */
  async function attempt(method: string, url: string, body: string | undefined, signal: AbortSignal | undefined, timeout: number, credentials: boolean, extra: Record<string, string> = {}): Promise<Answer> {
    const timer = AbortSignal.timeout(timeout);
    const combined = signal === undefined ? timer : AbortSignal.any([signal, timer]);
    const headers: Record<string, string> = { ...extra, accept: format === 'xml' ? 'application/xml' : 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (session !== undefined && !(credentials && basic !== undefined)) {
      headers.cookie = `${SESSION_COOKIE}=${session}`;
      // What cmi asks of a request made with the cookie that changes something (docs/security.md#the-session-cookie-and-csrf).
      headers['x-requested-with'] = 'cmi/client';
    } else if (basic !== undefined) headers.authorization = basic;
    const extraHeaders = new Headers(options.fetchOptions?.headers);
    extraHeaders.forEach((value, name) => {
      headers[name] ??= value;
    });
    try {
      // Redirects are not followed: a 307 would send the body (a new user's password) to wherever the
      // Location points, and cmi never redirects its API.
      const response = await doFetch(url, { ...options.fetchOptions, method, headers, body, signal: combined, redirect: 'manual' });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel().catch(() => undefined);
        throw new CmiProtocolError(`the server redirected ${method} ${path(url)} (${response.status}) to ${response.headers.get('location') ?? 'nowhere'}; not followed: give that address as baseUrl`);
      }
      const text = await boundedText(response, maxResponseBytes);
      keepSession(response.headers);
      const answer: Answer = { status: response.status, headers: response.headers, body: undefined };
      try {
        Object.assign(answer, readBody(text, response.headers.get('content-type')));
      } catch (error) {
        // An error page of a proxy in front of the server is still that error.
        if (response.status < 400) throw error;
      }
      return answer;
    } catch (error) {
      if (error instanceof CmiError) throw error;
      if (signal?.aborted) throw new CmiAbortError('aborted by the caller');
      if (timer.aborted) throw new CmiTimeoutError(`no answer from ${method} ${url} within ${timeout} ms`);
      throw new CmiConnectionError(`cannot reach ${baseUrl}: ${networkProblem(error)}`);
    }
  }

  /** Milliseconds before try `retry` (1-based): `Retry-After` if it fits under the cap, else backoff with jitter. */
  function delayBefore(retry: number, retryAfter: number | undefined): number | undefined {
    if (retryAfter !== undefined) return retryAfter * 1000 <= maxRetryDelay ? retryAfter * 1000 : undefined;
    const backoff = Math.min(initialRetryDelay * 2 ** (retry - 1), maxRetryDelay);
    return backoff * (0.75 + Math.random() * 0.25);
  }

  return {
    format,
    baseUrl,
    /** Whether a session cookie is held. */
    get hasSession() {
      return session !== undefined;
    },
    forgetSession() {
      session = undefined;
    },

    /** `path` without extension (`/users/3`); the format's extension is added. A status of 400 or more throws. */
    /**
     * With `credentials`, the call goes with HTTP Basic even while a session is held: a new login,
     * email, password or API key through the cookie would need the current password
     * (docs/security.md#self-service), which the client may not have (an API key). `headers`: a
     * call's own (the second factor's `X-Cmi-OTP`), under those the client sets.
     */
    async request(method: string, path: string, call: RequestOptions & { query?: Query; body?: unknown; credentials?: boolean; headers?: Record<string, string> } = {}): Promise<Answer> {
      const url = `${baseUrl}${path}.${format}${queryString(call.query)}`;
      const body = call.body === undefined ? undefined : JSON.stringify(call.body);
      const retries = IDEMPOTENT.has(method) ? (call.maxRetries ?? options.maxRetries ?? 2) : 0;
      const timeout = call.timeout ?? options.timeout ?? 60_000;
      let refreshed = false;
      for (let tried = 0; ; tried++) {
        let answer: Answer;
        try {
          const credentials = call.credentials === true;
          const usedSession = session !== undefined && !(credentials && basic !== undefined);
          answer = await attempt(method, url, body, call.signal, timeout, credentials, call.headers);
          if (answer.status === 401 && usedSession && basic !== undefined && !refreshed) {
            // The session ended (logout, expiry, a changed password): once more with the credentials.
            session = undefined;
            refreshed = true;
            tried--;
            continue;
          }
        } catch (error) {
          if (!(error instanceof CmiConnectionError) || tried >= retries) throw error;
          await sleep(delayBefore(tried + 1, undefined)!, call.signal);
          continue;
        }
        if (answer.status < 400) return answer;
        const error = apiError(answer);
        const delay = tried < retries && RETRIED_STATUSES.has(answer.status) ? delayBefore(tried + 1, error.retryAfter) : undefined;
        if (delay === undefined) throw error;
        await sleep(delay, call.signal);
      }
    },
  };
}

export type Transport = ReturnType<typeof transport>;
