import type { FastifyInstance } from 'fastify';
import { consoleRoute, type ConsoleServices, pageContext, sendPage } from './console-page.js';
import { sourcesListPage } from './sources-pages.js';

type Query = { Querystring: Record<string, string | string[] | undefined> };

/** The most sources the page lists; the filters find the others. */
const LISTED = 500;

/** Log sources (docs/console.md#log-sources): filtered by host, program and component; who may see them: logs/log-sources.service.ts. */
export function consoleSourcesRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { logSources } = services;
  app.get<Query>('/sources', consoleRoute(), async (request, reply) => {
    // An empty field of the form is no filter (a program of '' is asked for through the API).
    const filters: Record<string, string> = {};
    for (const name of ['host', 'program', 'component']) {
      const value = request.query[name];
      if (typeof value === 'string' && value !== '') filters[name] = value;
    }
    const { items, total } = await logSources.list(request.actor, filters, LISTED, 0);
    return sendPage(reply, sourcesListPage(pageContext(request, services), { sources: items, total, filters, listed: LISTED }));
  });
}
