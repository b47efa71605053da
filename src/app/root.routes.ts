import type { FastifyPluginCallback } from 'fastify';
import { faviconRoute } from '../console/assets.routes.js';

/** Whether `accept` prefers HTML to JSON and XML (a browser's navigation); `*\/*` alone does not. */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const html = accept.indexOf('text/html');
  if (html === -1) return false;
  const api = [accept.indexOf('application/json'), accept.search(/application\/xml|text\/xml/)].filter((i) => i !== -1);
  return api.every((i) => i > html);
}

/**
 * `/favicon.ico`: the console's icon, without credentials, for a browser that asks for it where a page names
 * none (the console's pages name /console/assets/favicon). `/`: a browser (Accept preferring text/html) goes to the console; anything else gets what it got
 * before there was a route here, the not-found answer after the credential check (docs/console.md).
 */
export const rootRoutes: FastifyPluginCallback = (app, _options, done) => {
  app.get('/favicon', { config: { public: true, extension: 'ico' }, onSend: faviconRoute.onSend }, faviconRoute.handler);
  app.get('/', { config: { public: true } }, (request, reply) => {
    if (prefersHtml(request.headers.accept)) return reply.code(302).header('location', '/console').send();
    return reply.callNotFound();
  });
  done();
};
