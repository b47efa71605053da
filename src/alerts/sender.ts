import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

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
 * The ports fetch never sends to, the Fetch standard's "bad ports": a webhook there could not be
 * delivered once, so its URL is refused where it is given (docs/reporting-and-alerts.md#the-outbox).
 */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111,
  113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548,
  554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566,
  6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** The port of `url` that fetch refuses to send to, or undefined when it sends there. */
export function refusedPort(url: URL): number | undefined {
  const port = url.port === '' ? undefined : Number(url.port);
  return port !== undefined && BAD_PORTS.has(port) ? port : undefined;
}

/** What a try cut short by the process stopping came to. */
const STOPPED: Attempt = { status: null, excerpt: '', problem: 'stopped' };

/** Why a request failed, in a few words: the system's code where there is one (ECONNREFUSED), else its message. */
function problemOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code !== 'ABORT_ERR') return code;
  return error instanceof Error ? error.message : String(error);
}

/**
 * `url` without its credentials, and the Authorization header they stand for (`user:password`, each
 * percent-decoded, Basic), unless `headers` carry one (docs/architecture.md#webhook-delivery).
 */
function withoutCredentials(target: URL, headers: Record<string, string>): { url: URL; headers: Record<string, string> } {
  if (target.username === '' && target.password === '') return { url: target, headers };
  const auth = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
  const bare = new URL(target.href);
  bare.username = '';
  bare.password = '';
  const given = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
  return { url: bare, headers: given ? headers : { ...headers, authorization: `Basic ${Buffer.from(auth).toString('base64')}` } };
}

/** The start of `response`'s body, up to RESPONSE_READ_LIMIT bytes; the rest is not read (the connection goes). A break while reading keeps what came. */
function readStart(response: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let read = 0;
    const done = () => resolve(Buffer.concat(chunks));
    response.on('data', (chunk: Buffer) => {
      const room = RESPONSE_READ_LIMIT - read;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      read += Math.min(chunk.length, room);
      if (read >= RESPONSE_READ_LIMIT) {
        response.destroy();
        done();
      }
    });
    response.on('end', done);
    // A reset, or the try cut short (the caller answers for that): what came is kept.
    response.on('error', done);
    response.on('close', done);
  });
}

/** Where a try connects: `lookup` resolves the URL's host name (a destination's checks each address: alerts/address-guard.ts). */
export interface ConnectOptions {
  lookup?: LookupFunction;
}

/**
 * POSTs `body` to `url` once, with `headers`, by node:http or node:https. The whole exchange
 * (connecting, sending, the answer and up to 64 KiB of its body) must end within `timeoutMs`, or as
 * soon as `stop` aborts; a new connection each time (`connection: close`, no agent: nothing kept
 * open to hold a stopping process), no redirects followed (a 3xx is the answer), the server's
 * certificate checked. `connect.lookup`, when given, resolves the host (a literal address is not
 * resolved: the caller checks it). Never throws: a failure is an Attempt without a status.
 */
export async function postWebhook(url: string, body: string, headers: Record<string, string>, timeoutMs: number, stop?: AbortSignal, connect: ConnectOptions = {}): Promise<Attempt> {
  if (stop?.aborted) return STOPPED;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { status: null, excerpt: '', problem: 'invalid URL' };
  }
  // A URL of another scheme (config.ts lets only http and https through): a failed try, never a throw.
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return { status: null, excerpt: '', problem: `Protocol "${target.protocol}" not supported. Expected "http:"` };
  const request = withoutCredentials(target, headers);
  const payload = Buffer.from(body, 'utf8');

  // One signal ends the try, whichever comes first: the timeout or the stop; `cut` says which it was.
  const cutShort = new AbortController();
  let cut: Attempt | undefined;
  const cutWith = (attempt: Attempt) => {
    if (cut !== undefined) return;
    cut = attempt;
    cutShort.abort();
  };
  const timer = setTimeout(() => cutWith({ status: null, excerpt: '', problem: `no answer within ${timeoutMs} ms` }), timeoutMs);
  const onStop = () => cutWith(STOPPED);
  stop?.addEventListener('abort', onStop);
  try {
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const send = request.url.protocol === 'https:' ? httpsRequest : httpRequest;
      const outgoing = send(request.url, {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(payload.length), connection: 'close' },
        agent: false,
        signal: cutShort.signal,
        ...(connect.lookup ? { lookup: connect.lookup } : {}),
      }, resolve);
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
    const text = (await readStart(response)).toString('utf8').replace(/\p{Cc}+/gu, ' ').trim();
    response.destroy();
    if (cut !== undefined) return cut;
    return { status: response.statusCode ?? null, excerpt: withoutUrlSecrets(text.slice(0, LOGGED_CHARS), url) };
  } catch (error) {
    return cut ?? { status: null, excerpt: '', problem: problemOf(error) };
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener('abort', onStop);
    // Whatever is still open of this try (a body not read to its end) goes now.
    cutShort.abort();
  }
}
