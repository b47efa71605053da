import { type ClientRequest, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** The most of a receiver's answer that is read; the rest is dropped unread (docs/reporting-and-alerts.md#limits). */
export const RESPONSE_READ_LIMIT = 64 * 1024;
/** The most of that answer a log line quotes. */
const LOGGED_CHARS = 200;

/** What one try of a delivery came to. */
export interface Attempt {
  /** The receiver's HTTP status; null when it gave none (refused, reset, timed out, stopped). */
  status: number | null;
  /** The start of the answer's body, one line, at most 200 characters: fit for a log line. */
  excerpt: string;
  /** Why there is no status, in a few words. */
  problem?: string;
}

export const succeeded = (attempt: Attempt): boolean => attempt.status !== null && attempt.status >= 200 && attempt.status < 300;

/**
 * `url` as a log line or the deliveries list may show it: its origin only. Incoming webhooks of chat
 * services carry their secret in the path (`/services/T.../B.../XXXX`), and any URL may in its
 * credentials or query; none of those is shown.
 */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}/…`;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * `text` (the start of a receiver's answer) without what of `url` may be a secret: its path and query,
 * whole or by their longer parts, and its credentials. A receiver may echo the URL it was sent to
 * (Express: `Cannot POST /services/T.../B.../XXXX`), and the answer may be cut inside it: a cut end
 * that begins the path goes too. What is left is fit for the deliveries list and a log line.
 */
export function withoutUrlSecrets(text: string, url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return text;
  }
  const secret = `${parsed.pathname}${parsed.search}`;
  const parts = [
    secret, parsed.pathname, parsed.search.slice(1), parsed.username, parsed.password,
    ...parsed.pathname.split('/'), ...[...parsed.searchParams.values()],
  ].filter((part) => part.length >= 8 || (part.length > 1 && (part === secret || part === parsed.pathname)));
  let kept = text;
  for (let n = Math.min(secret.length, kept.length); n > 1; n--) {
    if (kept.endsWith(secret.slice(0, n))) {
      kept = `${kept.slice(0, -n)}…`;
      break;
    }
  }
  for (const part of [...new Set(parts)].sort((a, b) => b.length - a.length)) kept = kept.split(part).join('…');
  return kept;
}

/**
 * POSTs `body` to `url` once, with `headers`. The whole exchange (connecting, sending, the answer
 * and up to 64 KiB of its body) must end within `timeoutMs`, or as soon as `stop` aborts; a new
 * connection each time (nothing kept open to hold a stopping process), no redirects followed.
 * Never throws: a failure is an Attempt without a status.
 */
export function postWebhook(url: string, body: string, headers: Record<string, string>, timeoutMs: number, stop?: AbortSignal): Promise<Attempt> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined = undefined;
    let req: ClientRequest | undefined;
    const finish = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
      req?.destroy();
      resolve(attempt);
    };
    const onStop = () => finish({ status: null, excerpt: '', problem: 'stopped' });
    if (stop?.aborted) return onStop();
    let send: typeof httpRequest;
    try {
      send = new URL(url).protocol === 'https:' ? httpsRequest : httpRequest;
    } catch {
      return finish({ status: null, excerpt: '', problem: 'invalid URL' });
    }
    try {
      req = send(url, { method: 'POST', agent: false, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
        const chunks: Buffer[] = [];
        let read = 0;
        const done = () => {
          const text = Buffer.concat(chunks).toString('utf8').replace(/\p{Cc}+/gu, ' ').trim();
          finish({ status: res.statusCode ?? null, excerpt: withoutUrlSecrets(text.slice(0, LOGGED_CHARS), url) });
        };
        res.on('data', (chunk: Buffer) => {
          const room = RESPONSE_READ_LIMIT - read;
          chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          read += Math.min(chunk.length, room);
          if (read >= RESPONSE_READ_LIMIT) done();
        });
        res.on('end', done);
        res.on('error', done);
      });
    } catch (error) {
      // A URL Node refuses (config.ts lets only http and https through): a failed try, never a throw.
      return finish({ status: null, excerpt: '', problem: error instanceof Error ? error.message : String(error) });
    }
    timer = setTimeout(() => finish({ status: null, excerpt: '', problem: `no answer within ${timeoutMs} ms` }), timeoutMs);
    stop?.addEventListener('abort', onStop);
    req.on('error', (error: NodeJS.ErrnoException) => finish({ status: null, excerpt: '', problem: error.code ?? error.message }));
    req.end(body);
  });
}
