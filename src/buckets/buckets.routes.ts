import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { bucketResource as resource } from './bucket.resource.js';
import type { BucketsService } from './buckets.service.js';

type WithId = { Params: { id: string } };

const BUCKETS = '/billing/buckets';
const BUCKET_BODY = {
  root: 'bucket',
  fields: [['label', 'string'], ['currency_code', 'string'], ['monthly_price', 'decimal'], ['show_price', 'boolean'], ['allows_kms', 'boolean'], ['allows_mak', 'boolean'], ['allows_own', 'boolean']],
} as const;

export const BUCKETS_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: BUCKETS, summary: 'A page of billing buckets', who: 'holders of buckets.read', formats: true, paginated: true, answers: { 200: { list: resource } } },
  { method: 'POST', path: BUCKETS, summary: 'Creates a billing bucket', who: 'holders of buckets.create', formats: true, location: true, body: { ...BUCKET_BODY, required: ['label'] }, answers: { 201: { record: resource } } },
  { method: 'GET', path: `${BUCKETS}/:id`, summary: 'One billing bucket', who: 'holders of buckets.read', formats: true, answers: { 200: { record: resource } } },
  { method: 'PUT', path: `${BUCKETS}/:id`, summary: 'Changes the fields the body names', who: 'holders of buckets.update', formats: true, body: BUCKET_BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: `${BUCKETS}/:id`, summary: 'Deletes a billing bucket', who: 'holders of buckets.delete', formats: true, answers: { 204: { empty: true } } },
];

export interface BucketsRoutesOptions {
  buckets: BucketsService;
  lists: ListSettings;
}

/** OnApp's billing buckets (docs/api.md#billing-buckets); who may do what: buckets/buckets.service.ts. */
export const bucketsRoutes: FastifyPluginCallback<BucketsRoutesOptions> = (app, { buckets, lists }, done) => {
  app.get(BUCKETS, { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Record<string, string | string[]>, lists);
    const { items, total } = await buckets.list(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
  });

  app.post(BUCKETS, async (request, reply) => {
    const bucket = await buckets.create(request.actor, request.body);
    reply.code(201).header('location', `${BUCKETS}/${bucket.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: bucket });
  });

  app.get<WithId>(`${BUCKETS}/:id`, async (request, reply) => {
    const bucket = await buckets.get(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: bucket });
  });

  app.put<WithId>(`${BUCKETS}/:id`, async (request, reply) => {
    await buckets.update(request.actor, parseId(request.params.id), request.body);
    return reply.code(204).send();
  });

  app.delete<WithId>(`${BUCKETS}/:id`, async (request, reply) => {
    await buckets.remove(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });
  done();
};
