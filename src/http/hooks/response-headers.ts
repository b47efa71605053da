import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { runtimeSince, statusLine } from '../common-headers.js';
import { closeIfBodyUnread } from '../connections.js';
import { weakEtag } from '../respond.js';

const REVALIDATE = 'max-age=0, private, must-revalidate';

/** True when If-None-Match names `etag` (weak comparison, RFC 9110) or is `*`. */
function matchesIfNoneMatch(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  // A client revalidating sends back the one ETag it was given: no list to take apart.
  if (header === etag) return true;
  const opaque = etag.slice(2);
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === opaque;
  });
}

/**
 * The headers of docs/api.md#response-headers on every response: X-Request-Id, X-Runtime, Status,
 * and caching (a weak ETag and 304 on a matching If-None-Match for a successful GET; no-cache otherwise).
 */
export function registerResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    let body = payload;
    if ((request.method === 'GET' || request.method === 'HEAD') && reply.statusCode === 200 && (typeof payload === 'string' || payload instanceof Buffer)) {
      // A cached response brings its ETag along; anything else is hashed here.
      let etag = reply.getHeader('etag') as string | undefined;
      if (etag === undefined) {
        etag = weakEtag(payload);
        reply.header('etag', etag);
      }
      reply.header('cache-control', REVALIDATE);
      if (matchesIfNoneMatch(request, etag)) {
        reply.code(304);
        reply.removeHeader('content-type');
        body = '';
      }
    }
    setCommonHeaders(request, reply);
    done(null, body);
  });
}

/**
 * The common headers, keeping the caching a successful GET already set; Connection: close on an answer
 * given before the body was read (docs/limits.md#connections).
 */
export function setCommonHeaders(request: FastifyRequest, reply: FastifyReply): void {
  // One by one, as commonHeaders lists them: no object built and walked for every response.
  if (reply.getHeader('cache-control') === undefined) reply.header('cache-control', 'no-cache');
  reply.header('x-request-id', request.id);
  reply.header('status', statusLine(reply.statusCode));
  reply.header('x-runtime', runtimeSince(request.startedAt));
  closeIfBodyUnread(request, reply);
}
