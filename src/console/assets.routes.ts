import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
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
}
