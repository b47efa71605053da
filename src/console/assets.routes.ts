import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleRoute } from './console-page.js';

/** The console's two files, from static/console/ in the repository (the same path from src/ and dist/). */
const ASSETS = {
  'console-css': { file: 'console.css', type: 'text/css; charset=utf-8' },
  'console-js': { file: 'console.js', type: 'text/javascript; charset=utf-8' },
} as const;

/**
 * The console's stylesheet and its one ES module, read once at start and served from memory; no CDN,
 * no build step (docs/console.md#how-it-is-built). Their paths have no extension, since the API's
 * router reads an extension as a response format.
 */
export function consoleAssetsRoutes(app: FastifyInstance): void {
  for (const [name, { file, type }] of Object.entries(ASSETS)) {
    const body = readFileSync(new URL(`../../static/console/${file}`, import.meta.url));
    app.get(`/assets/${name}`, consoleRoute(true), (_request, reply) => reply.type(type).send(body));
  }
  app.get('/assets/favicon', { ...consoleRoute(true), onSend: faviconRoute.onSend }, faviconRoute.handler);
}

const FAVICON = readFileSync(new URL('../../static/console/favicon.svg', import.meta.url));
/** A day: the icon changes with a release at most, and a browser asks for it with every page otherwise. */
const FAVICON_CACHE = 'public, max-age=86400';

/**
 * Answers the console's icon (static/console/favicon.svg), without credentials: a browser asks for it
 * unasked (and for `/favicon.ico` where a page names none), and a 401 there would make it prompt for a
 * Basic login (docs/console.md#how-it-is-built). Cached for a day: set in the route's own onSend, which
 * runs after the app's (that gives every GET `private, must-revalidate`).
 */
export const faviconRoute = {
  onSend: (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
    if (reply.statusCode === 200 || reply.statusCode === 304) reply.header('cache-control', FAVICON_CACHE);
    done(null, payload);
  },
  handler: (_request: FastifyRequest, reply: FastifyReply) => reply.type('image/svg+xml').header('x-content-type-options', 'nosniff').send(FAVICON),
};
