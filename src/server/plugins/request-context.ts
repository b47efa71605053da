import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotAcceptable, NotFound } from '../../domain/errors.js';
import type { Format } from '../../render/payload.js';
import { parseRequestPath, type RequestPath } from '../request-path.js';

const REQUEST_ID = /^[A-Za-z0-9_@-]{1,255}$/;

/** The incoming X-Request-Id when it is well-formed, else a new UUID. */
export function requestIdFrom(header: string | string[] | undefined, generate: () => string): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : generate();
}

type RawWithPath = { cmiRequestPath?: RequestPath };

/** Rewrites the URL before routing (fastify's rewriteUrl) and keeps what the path said. */
export function rewriteRequestUrl(raw: { url?: string }): string {
  const requestPath = parseRequestPath(raw.url ?? '/');
  (raw as RawWithPath).cmiRequestPath = requestPath;
  return requestPath.routed;
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

/**
 * First hook of every request: when it started, and its format (JSON for an unknown extension, which
 * is refused after authentication, so the refusal is written in JSON).
 */
export function registerRequestContext(app: FastifyInstance): void {
  app.decorateRequest('format', 'json');
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('requestPath');
  app.decorateRequest('viewer');
  app.addHook('onRequest', (request, _reply, done) => {
    request.startedAt = performance.now();
    request.requestPath = (request.raw as RawWithPath).cmiRequestPath ?? parseRequestPath(request.url);
    request.format = formatOf(request, request.requestPath.extension) ?? 'json';
    done();
  });
}

/**
 * After authentication: 406 for an unknown extension, and pagination segments only where a list is
 * served (404 elsewhere). Authentication comes first so an anonymous caller learns nothing of paths.
 */
export function registerPathChecks(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const { extension, pagination } = request.requestPath;
    if (formatOf(request, extension) === undefined) return done(new NotAcceptable());
    if (pagination.length > 0 && !request.routeOptions.config.paginated) return done(new NotFound());
    done();
  });
}
