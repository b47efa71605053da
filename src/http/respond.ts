import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { LRUCache } from 'lru-cache';
import { renderJson } from './render/json.js';
import { CONTENT_TYPES, type Format, type Payload } from './render/payload.js';
import { renderXml } from './render/xml.js';

export function render(format: Format, payload: Payload): string {
  return format === 'xml' ? renderXml(payload) : renderJson(payload);
}

/** The one place a payload becomes bytes, in the format the request asked for. */
export function sendPayload(reply: FastifyReply, format: Format, payload: Payload): FastifyReply {
  reply.header('content-type', CONTENT_TYPES[format]);
  return reply.send(render(format, payload));
}

/**
 * A response kept whole: its bytes (UTF-8, encoded once, so what it costs to keep is exactly
 * known and it is not encoded again for every answer) and all its own headers, its ETag among them.
 */
export interface RenderedResponse {
  body: Buffer;
  headers: Record<string, string>;
}

export function renderResponse(format: Format, payload: Payload, headers: Record<string, string>): RenderedResponse {
  const text = render(format, payload);
  return { body: Buffer.from(text, 'utf8'), headers: { ...headers, 'content-type': CONTENT_TYPES[format], etag: weakEtag(text) } };
}

/** Room for the objects around a kept page (its entry, the header object, the Buffer): about 1 KiB a small page, seen on the heap after gc. */
const ENTRY_OVERHEAD_BYTES = 1024;

/**
 * What keeping `rendered` under `key` costs, in bytes: the body's bytes, and the key's and the headers'
 * characters at two bytes each (the most V8 spends on a string's character), plus a fixed overhead.
 */
export function renderedCost(key: string, rendered: RenderedResponse): number {
  let chars = key.length;
  for (const name in rendered.headers) chars += name.length + (rendered.headers[name] as string).length;
  return rendered.body.byteLength + 2 * chars + ENTRY_OVERHEAD_BYTES;
}

export function sendRendered(reply: FastifyReply, rendered: RenderedResponse): FastifyReply {
  return reply.headers(rendered.headers).send(rendered.body);
}

/** Short bodies hashed lately, by their text: the same answer again (the version, an error) is not hashed again. */
const RECENT_ETAGS = 64;
const recentEtags = new LRUCache<string, string>({ max: RECENT_ETAGS });
const RECENT_ETAG_MAX_CHARS = 4096;

/** `W/"<sha1 of the body>"` (of its UTF-8 bytes, whether given as text or as bytes). */
export function weakEtag(body: string | Buffer): string {
  const remembered = typeof body === 'string' && body.length <= RECENT_ETAG_MAX_CHARS;
  if (remembered) {
    const known = recentEtags.get(body);
    if (known !== undefined) return known;
  }
  const etag = `W/"${createHash('sha1').update(body).digest('hex')}"`;
  if (remembered) recentEtags.set(body, etag);
  return etag;
}
