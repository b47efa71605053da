import type { FastifyPluginCallback } from 'fastify';

/** Whether `accept` prefers HTML to JSON and XML (a browser's navigation); `*\/*` alone does not. */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const html = accept.indexOf('text/html');
  if (html === -1) return false;
  const api = [accept.indexOf('application/json'), accept.search(/application\/xml|text\/xml/)].filter((i) => i !== -1);
  return api.every((i) => i > html);
}

/**
 * `/`: a browser (Accept preferring text/html) goes to the console; anything else gets what it got
 * before there was a route here, the not-found answer after the credential check (docs/console.md).
 */
export const rootRoutes: FastifyPluginCallback = (app, _options, done) => {
  app.get('/', { config: { public: true } }, (request, reply) => {
    if (prefersHtml(request.headers.accept)) return reply.code(302).header('location', '/console').send();
    return reply.callNotFound();
  });
  done();
};
