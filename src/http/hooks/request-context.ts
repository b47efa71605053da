import type { FastifyRequest } from 'fastify';
import type { Format } from '../render/payload.js';
import { parseRequestPath, type RequestPath } from '../request-path.js';

declare module 'fastify' {
  interface FastifyRequest {
    format: Format;
    /** performance.now() when the request arrived, for X-Runtime. */
    startedAt: number;
    requestPath: RequestPath;
  }
  interface FastifyContextConfig {
    /** The route serves a paginated list and accepts pagination path segments. */
    paginated?: boolean;
    /** The route needs no credentials (health probes, the OpenAPI document and its page, /metrics with its own token). */
    public?: boolean;
    /** The one extension a fixed-format route answers to (`/openapi.json`, `/docs/reference.css`); others: 406. */
    extension?: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9_@-]{1,255}$/;

/** The incoming X-Request-Id when it is well-formed, else a new UUID. */
export function requestIdFrom(header: string | string[] | undefined, generate: () => string): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : generate();
}

/** The raw request, carrying what rewriteRequestUrl read from its path. */
type RawWithPath = { cmiRequestPath?: RequestPath };

/** Rewrites the URL before routing (fastify's rewriteUrl) and keeps what the path said. */
export function rewriteRequestUrl(raw: { url?: string }): string {
  const requestPath = parseRequestPath(raw.url ?? '/');
  (raw as RawWithPath).cmiRequestPath = requestPath;
  return requestPath.routed;
}

/** When the request started, what its path said, and its format (JSON for an unknown extension). */
export function startRequest(request: FastifyRequest): void {
  request.startedAt = performance.now();
  request.requestPath = (request.raw as RawWithPath).cmiRequestPath ?? parseRequestPath(request.raw.url ?? '/');
  request.format = formatOf(request, request.requestPath.extension) ?? 'json';
}

/** The requested format; undefined for an extension cmi does not serve. */
export function formatOf(request: FastifyRequest, extension: string | undefined): Format | undefined {
  if (extension === 'json' || extension === 'xml') return extension;
  if (extension !== undefined) return undefined;
  const accept = request.headers.accept ?? '';
  const xml = accept.search(/application\/xml|text\/xml/);
  const json = accept.indexOf('application/json');
  return xml !== -1 && (json === -1 || xml < json) ? 'xml' : 'json';
}
