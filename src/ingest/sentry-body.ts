import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gunzip, inflate, inflateRaw } from 'node:zlib';
import { MalformedRequest, PayloadTooLarge, UnsupportedEncoding } from '../shared/problems.js';

/** The limits of docs/sentry.md#limits. */
export const SENTRY_LIMITS = {
  /** A body as it arrives (compressed or not). */
  bodyBytes: 1_048_576,
  /** A body once decompressed: a decompression bomb is cut off here, while it is inflated. */
  decompressedBytes: 20 * 1_048_576,
  /** One event's JSON. */
  eventBytes: 1_048_576,
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

/** Inflates with a bound on what comes out: zlib stops there (413), a broken stream is 400. */
async function inflated(kind: 'gzip' | 'deflate' | 'zlib', body: Buffer): Promise<Buffer> {
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
    if (tooLarge(error)) throw new PayloadTooLarge(SENTRY_LIMITS.decompressedBytes);
    if (isZlibError(error) || error instanceof Error) throw new MalformedRequest(400, `The body is not valid ${kind === 'gzip' ? 'gzip' : 'deflate'} data`);
    throw error;
  }
}

const BASE64 = /^[A-Za-z0-9+/=\s]+$/;

/**
 * The body's bytes as JSON or an envelope: decoded from its Content-Encoding (gzip, deflate,
 * identity), and the legacy raven form (base64 of zlib, sent as application/octet-stream) unwrapped.
 */
export async function decodeSentryBody(body: Buffer, contentEncoding: string | undefined): Promise<Buffer> {
  let bytes = body;
  const encodings = (contentEncoding ?? '').split(',').map((part) => part.trim().toLowerCase()).filter((part) => part !== '' && part !== 'identity');
  if (encodings.length > 1) throw new UnsupportedEncoding(contentEncoding as string);
  const encoding = encodings[0];
  if (encoding === 'gzip' || encoding === 'x-gzip') bytes = await inflated('gzip', bytes);
  else if (encoding === 'deflate') bytes = await inflated('deflate', bytes);
  else if (encoding !== undefined) throw new UnsupportedEncoding(encoding);
  // Raven: base64 of zlib. JSON and envelopes start with `{`; base64 of zlib starts with `eJ`.
  let first = 0;
  while (first < bytes.length && (bytes[first] === 0x20 || bytes[first] === 0x0a || bytes[first] === 0x0d || bytes[first] === 0x09)) first += 1;
  if (first < bytes.length && bytes[first] !== 0x7b) {
    const text = bytes.toString('latin1');
    if (!BASE64.test(text)) throw new MalformedRequest(400, 'The body is neither JSON, an envelope, nor base64 of zlib');
    bytes = await inflated('zlib', Buffer.from(text, 'base64'));
  }
  return bytes;
}
