import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assertPermitted } from '../roles/authorization.js';
import { Unprocessable } from '../shared/problems.js';
import { parseId } from '../http/route-params.js';
import { consoleRoute, type ConsoleServices, formOf, pageContext, sendPage } from './console-page.js';
import { ingestKeyPage, ingestKeysListPage } from './ingest-keys-pages.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

const NOTICES: Record<string, string> = {
  created: 'Key created: give the service its DSN.',
  revoked: 'Key revoked: every process refuses it now.',
};
const noticeOf = (query: WithId['Querystring']) => (typeof query.notice === 'string' ? NOTICES[query.notice] : undefined);

/** The most keys the page lists (an installation has a key per service). */
const LISTED = 1000;

/** Ingest keys (docs/console.md#ingest-keys): their DSNs to copy, a snippet per language, creating and revoking. */
export function consoleIngestKeysRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { ingestKeys, publicUrl } = services;
  const baseOf = (request: FastifyRequest) => publicUrl ?? `${request.protocol}://${request.host}`;

  app.get<WithId>('/ingest-keys', consoleRoute(), async (request, reply) => {
    const { items, total } = await ingestKeys.list(request.actor, LISTED, 0, baseOf(request));
    return sendPage(reply, ingestKeysListPage(pageContext(request, services), { keys: items, total, notice: noticeOf(request.query) }));
  });

  app.post('/ingest-keys', consoleRoute(), async (request, reply) => {
    assertPermitted(request.actor, 'ingest_keys.create');
    const form = formOf(request);
    const values = { label: form.get('label') ?? '', component: form.get('component') ?? '' };
    try {
      const key = await ingestKeys.create(request.actor, values, baseOf(request));
      return reply.code(303).header('location', `/console/ingest-keys/${key.id}?notice=created`).send();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const { items, total } = await ingestKeys.list(request.actor, LISTED, 0, baseOf(request));
      return sendPage(reply, ingestKeysListPage(pageContext(request, services), { keys: items, total, values, errors: error.messages }), 422);
    }
  });

  app.get<WithId>('/ingest-keys/:id', consoleRoute(), async (request, reply) => {
    const key = await ingestKeys.get(request.actor, parseId(request.params.id), baseOf(request));
    return sendPage(reply, ingestKeyPage(pageContext(request, services), key, noticeOf(request.query)));
  });

  app.post<WithId>('/ingest-keys/:id/revoke', consoleRoute(), async (request, reply) => {
    await ingestKeys.remove(request.actor, parseId(request.params.id));
    return reply.code(303).header('location', '/console/ingest-keys?notice=revoked').send();
  });
}
