import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { createGunzip, createInflate, createInflateRaw, gunzip, inflate, inflateRaw } from 'node:zlib';
import { MalformedRequest, PayloadTooLarge, UnsupportedEncoding } from '../shared/problems.js';

/** The limits of docs/sentry.md#limits. */
export const SENTRY_LIMITS = {
  /** A body as it arrives (compressed or not). */
  bodyBytes: 1_048_576,
  /** A body once decompressed: a decompression bomb is cut off here, while it is inflated. */
  decompressedBytes: 20 * 1_048_576,
  /** One event's JSON. */
  eventBytes: 1_048_576,
  /**
   * The envelope header and each item header, a line each: read before anything else of the body
   * is inflated or parsed, so a body without a key costs no more than this.
   */
  headerBytes: 8192,
  /** Items in one envelope, of any type. */
  items: 1000,
} as const;

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);
const inflateRawAsync = promisify(inflateRaw);

/** Reads a request body up to `limit` bytes; past it, 413 at once (the rest is never read). */
export async function readLimited(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const bytes = chunk as Buffer;
    length += bytes.length;
    if (length > limit) {
      stream.destroy();
      throw new PayloadTooLarge(limit);
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, length);
}

const isZlibError = (error: unknown) => typeof (error as { code?: unknown }).code === 'string' && (error as { code: string }).code.startsWith('Z_');
const tooLarge = (error: unknown) => (error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE';

type Kind = 'gzip' | 'deflate' | 'zlib';

/** What a failure of zlib is answered with: beyond the bound 413, a broken stream 400. */
function zlibProblem(kind: Kind, error: unknown): unknown {
  if (tooLarge(error)) return new PayloadTooLarge(SENTRY_LIMITS.decompressedBytes);
  if (isZlibError(error) || error instanceof Error) return new MalformedRequest(400, `The body is not valid ${kind === 'gzip' ? 'gzip' : 'deflate'} data`);
  return error;
}

/** Inflates with a bound on what comes out: zlib stops there (413), a broken stream is 400. */
async function inflated(kind: Kind, body: Buffer): Promise<Buffer> {
  // Each chunk zlib fills is a hand-off between the thread pool and the event loop: zlib's default
  // 16 KiB made a 25 KB envelope (some 120 KB of JSON) cost about twice the CPU of 64 KiB chunks, and
  // 64 KiB still took two. A chunk of 8 times the body (JSON inflates about 5 times), between 64 KiB
  // and 1 MiB, holds most bodies whole: 0.87-0.88x the server's CPU per such envelope, measured against
  // 64 KiB chunks alternately on one machine (scenario F of docs/benchmarks.md#error-tracker measures the whole).
  const options = { maxOutputLength: SENTRY_LIMITS.decompressedBytes, chunkSize: Math.min(1_048_576, Math.max(65_536, body.length * 8)) };
  try {
    if (kind === 'gzip') return await gunzipAsync(body, options);
    if (kind === 'zlib') return await inflateAsync(body, options);
    // HTTP's deflate is zlib-wrapped; some clients send it raw.
    return await inflateAsync(body, options).catch((error: unknown) => {
      if (tooLarge(error)) throw error;
      return inflateRawAsync(body, options);
    });
  } catch (error) {
    throw zlibProblem(kind, error);
  }
}

/** The first bytes of a body, and whether they are all of it. */
export interface BodyHead {
  bytes: Buffer;
  whole: boolean;
}

/**
 * At most `limit` bytes of what `body` inflates to, inflated as a stream that is dropped as soon as
 * they are out: about `limit` and one chunk of zlib's are inflated, whatever the body would become.
 */
async function inflatedHead(kind: 'gzip' | 'zlib' | 'raw', body: Buffer, limit: number): Promise<BodyHead> {
  const options = { chunkSize: 16_384 };
  const stream = kind === 'gzip' ? createGunzip(options) : kind === 'zlib' ? createInflate(options) : createInflateRaw(options);
  stream.end(body);
  const chunks: Buffer[] = [];
  let length = 0;
  // Leaving the loop destroys the stream: zlib inflates nothing more.
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
    length += (chunk as Buffer).length;
    if (length > limit) return { bytes: Buffer.concat(chunks, length).subarray(0, limit), whole: false };
  }
  return { bytes: Buffer.concat(chunks, length), whole: true };
}

const BASE64 = /^[A-Za-z0-9+/=\s]+$/;

/** The one Content-Encoding to undo, if any: more than one, or one cmi does not decode, is 415. */
function encodingOf(contentEncoding: string | undefined): 'gzip' | 'deflate' | undefined {
  const encodings = (contentEncoding ?? '').split(',').map((part) => part.trim().toLowerCase()).filter((part) => part !== '' && part !== 'identity');
  if (encodings.length > 1) throw new UnsupportedEncoding(contentEncoding as string);
  const encoding = encodings[0];
  if (encoding === 'gzip' || encoding === 'x-gzip') return 'gzip';
  if (encoding === 'deflate' || encoding === undefined) return encoding;
  throw new UnsupportedEncoding(encoding);
}

/** Raven: base64 of zlib. JSON and envelopes start with `{` (after any whitespace); base64 of zlib starts with `eJ`. */
function isRaven(bytes: Buffer): boolean {
  let first = 0;
  while (first < bytes.length && (bytes[first] === 0x20 || bytes[first] === 0x0a || bytes[first] === 0x0d || bytes[first] === 0x09)) first += 1;
  return first < bytes.length && bytes[first] !== 0x7b;
}

/**
 * The body's bytes as JSON or an envelope: decoded from its Content-Encoding (gzip, deflate,
 * identity), and the legacy raven form (base64 of zlib, sent as application/octet-stream) unwrapped.
 */
export async function decodeSentryBody(body: Buffer, contentEncoding: string | undefined): Promise<Buffer> {
  let bytes = body;
  const encoding = encodingOf(contentEncoding);
  if (encoding === 'gzip') bytes = await inflated('gzip', bytes);
  else if (encoding === 'deflate') bytes = await inflated('deflate', bytes);
  if (isRaven(bytes)) {
    const text = bytes.toString('latin1');
    if (!BASE64.test(text)) throw new MalformedRequest(400, 'The body is neither JSON, an envelope, nor base64 of zlib');
    bytes = await inflated('zlib', Buffer.from(text, 'base64'));
  }
  return bytes;
}

/**
 * At most `limit` bytes of the body once decoded, decoding no more than about that: what an
 * envelope sent without a key is read for, its header line (docs/sentry.md#limits). Undefined for
 * raven's base64 of zlib, whose key comes in X-Sentry-Auth.
 */
export async function decodeSentryHead(body: Buffer, contentEncoding: string | undefined, limit: number): Promise<BodyHead | undefined> {
  const encoding = encodingOf(contentEncoding);
  let head: BodyHead;
  try {
    if (encoding === 'gzip') head = await inflatedHead('gzip', body, limit);
    else if (encoding === 'deflate') {
      // HTTP's deflate is zlib-wrapped; some clients send it raw (refused by zlib at its first bytes).
      head = await inflatedHead('zlib', body, limit).catch((error: unknown) => {
        if (!isZlibError(error)) throw error;
        return inflatedHead('raw', body, limit);
      });
    } else head = { bytes: body.subarray(0, limit), whole: body.length <= limit };
  } catch (error) {
    throw zlibProblem(encoding ?? 'deflate', error);
  }
  return isRaven(head.bytes) ? undefined : head;
}
