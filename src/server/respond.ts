import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { renderJson } from '../render/json.js';
import { CONTENT_TYPES, type Format, type Payload } from '../render/payload.js';
import { renderXml } from '../render/xml.js';

export function render(format: Format, payload: Payload): string {
  return format === 'xml' ? renderXml(payload) : renderJson(payload);
}

/** The one place a payload becomes bytes, in the format the request asked for. */
export function sendPayload(reply: FastifyReply, format: Format, payload: Payload): FastifyReply {
  reply.header('content-type', CONTENT_TYPES[format]);
  return reply.send(render(format, payload));
}

/** A response kept whole: its bytes and all its own headers, its ETag among them. */
export interface RenderedResponse {
  body: string;
  headers: Record<string, string>;
}

export function renderResponse(format: Format, payload: Payload, headers: Record<string, string>): RenderedResponse {
  const body = render(format, payload);
  return { body, headers: { ...headers, 'content-type': CONTENT_TYPES[format], etag: weakEtag(body) } };
}

export function sendRendered(reply: FastifyReply, rendered: RenderedResponse): FastifyReply {
  return reply.headers(rendered.headers).send(rendered.body);
}

/** `W/"<sha1 of the body>"`. */
export function weakEtag(body: string): string {
  return `W/"${createHash('sha1').update(body).digest('hex')}"`;
}
