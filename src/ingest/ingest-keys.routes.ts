import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { ingestKeyResource as resource } from './ingest-key.resource.js';
import type { IngestKeysService } from './ingest-keys.service.js';

type WithId = { Params: { id: string } };

export const INGEST_KEYS = '/sysadmin_tools/infrastructure/ingest_keys';
const KEY_BODY = {
  root: 'ingest_key',
  fields: [
    ['label', 'string'], ['component', 'string'], ['enabled', 'boolean'], ['rate_limit_per_minute', 'integer'], ['allowed_origins', 'string[]'],
    ['kind', 'string'], ['allowed_networks', 'string[]'], ['client_certificate_sha256', 'string'], ['min_severity', 'integer'],
  ],
} as const;

export const INGEST_KEYS_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: INGEST_KEYS, summary: 'A page of ingest keys (Sentry DSNs)', who: 'holders of ingest_keys.read', formats: true, paginated: true, answers: { 200: { list: resource } } },
  { method: 'POST', path: INGEST_KEYS, summary: 'Creates an ingest key', who: 'holders of ingest_keys.create', formats: true, location: true, body: { ...KEY_BODY, required: ['label'] }, answers: { 201: { record: resource } } },
  { method: 'GET', path: `${INGEST_KEYS}/:id`, summary: 'One ingest key', who: 'holders of ingest_keys.read', formats: true, answers: { 200: { record: resource } } },
  { method: 'PUT', path: `${INGEST_KEYS}/:id`, summary: 'Changes the fields the body names', who: 'holders of ingest_keys.update', formats: true, body: KEY_BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: `${INGEST_KEYS}/:id`, summary: 'Revokes an ingest key: refused at once by every process', who: 'holders of ingest_keys.delete', formats: true, answers: { 204: { empty: true } } },
];

export interface IngestKeysRoutesOptions {
  keys: IngestKeysService;
  lists: ListSettings;
  /** CMI_PUBLIC_URL when it is set: the DSNs start with it; otherwise with the address the request reached. */
  publicUrl: string | undefined;
}

/** Ingest keys (docs/api.md#ingest-keys); who may do what: ingest/ingest-keys.service.ts. */
export const ingestKeysRoutes: FastifyPluginCallback<IngestKeysRoutesOptions> = (app, { keys, lists, publicUrl }, done) => {
  const baseOf = (request: FastifyRequest) => publicUrl ?? `${request.protocol}://${request.host}`;

  app.get(INGEST_KEYS, { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Record<string, string | string[]>, lists);
    const { items, total } = await keys.list(request.actor, pagination.perPage, pagination.offset, baseOf(request));
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
  });

  app.post(INGEST_KEYS, async (request, reply) => {
    const key = await keys.create(request.actor, request.body, baseOf(request));
    reply.code(201).header('location', `${INGEST_KEYS}/${key.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: key });
  });

  app.get<WithId>(`${INGEST_KEYS}/:id`, async (request, reply) => {
    const key = await keys.get(request.actor, parseId(request.params.id), baseOf(request));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: key });
  });

  app.put<WithId>(`${INGEST_KEYS}/:id`, async (request, reply) => {
    await keys.update(request.actor, parseId(request.params.id), request.body);
    return reply.code(204).send();
  });

  app.delete<WithId>(`${INGEST_KEYS}/:id`, async (request, reply) => {
    await keys.remove(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });
  done();
};
