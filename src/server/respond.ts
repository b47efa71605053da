import type { FastifyReply } from 'fastify';
import { renderJson } from '../render/json.js';
import { CONTENT_TYPES, type Format, type Payload } from '../render/payload.js';
import { renderXml } from '../render/xml.js';

/** The one place a payload becomes bytes, in the format the request asked for. */
export function sendPayload(reply: FastifyReply, format: Format, payload: Payload): FastifyReply {
  reply.header('content-type', CONTENT_TYPES[format]);
  return reply.send(format === 'xml' ? renderXml(payload) : renderJson(payload));
}
