import type { FastifyInstance } from 'fastify';
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

/**
 * `GET /openapi.json`, `GET /docs` and its style sheet (docs/api.md#openapi): made once, when the app
 * is built, and answered as the same bytes with their ETag. No credentials (CMI_OPENAPI=false turns them off).
 */
export function openApiRoutes(app: FastifyInstance, document: object): void {
  const json = fixed(JSON.stringify(document), 'application/json; charset=utf-8');
  const page = fixed(renderApiReference(document as Record<string, unknown>, STYLESHEET), 'text/html; charset=utf-8');
  const css = fixed(API_REFERENCE_CSS, 'text/css; charset=utf-8');
  const send = (answer: Fixed) => (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply.header('content-type', answer.type).header('etag', answer.etag).header('x-content-type-options', 'nosniff').send(answer.body);

  app.get('/openapi', { config: { public: true, extension: 'json' } }, send(json));
  app.get('/docs', { config: { public: true, extension: 'html' } }, (request, reply) => {
    reply.header('content-security-policy', PAGE_POLICY);
    return send(page)(request, reply);
  });
  app.get('/docs/reference', { config: { public: true, extension: 'css' } }, send(css));
}
