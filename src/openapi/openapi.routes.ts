import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { openApiDocument } from './openapi-document.js';
import { API_REFERENCE_CSS, renderApiReference } from './api-reference.js';
import { weakEtag } from '../http/respond.js';

/** The reference page runs no script and loads nothing but its own style sheet (docs/security.md#the-api-reference-page). */
const PAGE_POLICY = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const STYLESHEET = '/docs/reference.css';

interface Fixed {
  body: Buffer;
  etag: string;
  type: string;
}

function fixed(text: string, type: string): Fixed {
  const body = Buffer.from(text, 'utf8');
  return { body, etag: weakEtag(body), type };
}

/** Routes that exist only when CMI_OPENAPI is on (docs/operations.md#observe). */
export const OPENAPI_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/openapi', extension: 'json', summary: 'This document', who: 'anyone', formats: false, answers: { 200: { document: 'openapi' } } },
  { method: 'GET', path: '/docs', summary: 'The API reference, rendered from this document', who: 'anyone', formats: false, answers: { 200: { document: 'html' } } },
  { method: 'GET', path: '/docs/reference', extension: 'css', summary: 'The reference page\'s style sheet', who: 'anyone', formats: false, answers: { 200: { document: 'css' } } },
];

/**
 * `GET /openapi.json`, `GET /docs` and its style sheet (docs/api.md#openapi): the document of `routes`,
 * made once, on the first request for one of them (not at start: making it took tens of milliseconds
 * of every start, docs/operations.md#start-up), and answered as the same bytes with their ETag. No
 * credentials (CMI_OPENAPI=false turns them off).
 */
export const openApiRoutes: FastifyPluginCallback<{ version: string; routes: readonly RouteSpec[] }> = (app, { version, routes }, done) => {
  let made: { json: Fixed; page: Fixed; css: Fixed } | undefined;
  const answers = () => {
    if (made === undefined) {
      const document = openApiDocument({ version, routes });
      made = {
        json: fixed(JSON.stringify(document), 'application/json; charset=utf-8'),
        page: fixed(renderApiReference(document, STYLESHEET), 'text/html; charset=utf-8'),
        css: fixed(API_REFERENCE_CSS, 'text/css; charset=utf-8'),
      };
    }
    return made;
  };
  const send = (which: keyof NonNullable<typeof made>) => (_request: unknown, reply: FastifyReply) => {
    const answer = answers()[which];
    return reply.header('content-type', answer.type).header('etag', answer.etag).header('x-content-type-options', 'nosniff').send(answer.body);
  };

  app.get('/openapi', { config: { public: true, extension: 'json' } }, send('json'));
  app.get('/docs', { config: { public: true, extension: 'html' } }, (request, reply) => {
    reply.header('content-security-policy', PAGE_POLICY);
    return send('page')(request, reply);
  });
  app.get('/docs/reference', { config: { public: true, extension: 'css' } }, send('css'));
  done();
};
