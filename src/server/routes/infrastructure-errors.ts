import type { FastifyInstance, FastifyRequest } from 'fastify';
import { breakdownGroupResource, histogramBucketResource, occurrenceResource } from '../../resources/error-details.js';
import { infrastructureErrorResource as resource } from '../../resources/infrastructure-error.js';
import type { AppContext } from '../context.js';
import { paginationHeaders, parsePagination } from '../pagination.js';
import { sendPayload } from '../respond.js';
import { parseId } from '../route-params.js';

type WithId = { Params: { id: string } };
type Query = Record<string, string | string[]>;

/** The error tracker (docs/api.md#infrastructure-errors; administrators only: domain/infrastructure-errors.ts). */
export function infrastructureErrorsRoutes(app: FastifyInstance, { infrastructureErrors: tracker, config }: AppContext): void {
  const base = '/sysadmin_tools/infrastructure/errors';

  const pageOf = (request: FastifyRequest) => parsePagination(request.requestPath.pagination, request.query as Query, config);

  app.get(base, { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await tracker.list(request.viewer, request.query as Query, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
  });

  app.get<WithId>(`${base}/:id`, async (request, reply) => {
    const record = await tracker.find(request.viewer, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record });
  });

  /** Another component reports an error: 201 for a new fingerprint, 200 when it counted a known one. */
  app.post(base, async (request, reply) => {
    const { record, created } = await tracker.report(request.viewer, request.body);
    reply.code(created ? 201 : 200);
    if (created) reply.header('location', `${base}/${record.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record });
  });

  app.delete<WithId>(`${base}/:id`, async (request, reply) => {
    await tracker.remove(request.viewer, parseId(request.params.id));
    return reply.code(204).send();
  });

  app.delete(base, async (request, reply) => {
    const deleted = await tracker.removeMatching(request.viewer, request.query as Query);
    return sendPayload(reply, request.format, { kind: 'count', name: 'deleted', count: deleted });
  });

  app.get<WithId>(`${base}/:id/occurrences`, { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await tracker.occurrences(request.viewer, parseId(request.params.id), pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource: occurrenceResource, records: items });
  });

  app.get<WithId>(`${base}/:id/histogram`, async (request, reply) => {
    const buckets = await tracker.histogram(request.viewer, parseId(request.params.id), request.query as Query);
    return sendPayload(reply, request.format, { kind: 'list', resource: histogramBucketResource, records: buckets });
  });

  app.get<WithId>(`${base}/:id/breakdown`, { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await tracker.breakdown(request.viewer, parseId(request.params.id), request.query as Query, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource: breakdownGroupResource, records: items });
  });
}
