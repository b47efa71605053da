import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { versionedCache } from '../shared/page-cache.js';
import { breakdownGroupResource, histogramBucketResource, occurrenceResource } from './error-details.resource.js';
import { infrastructureErrorResource as resource } from './infrastructure-error.resource.js';
import type { AppContext } from '../app/context.js';
import { paginationHeaders, parsePagination } from '../shared/pagination.js';
import { type RenderedResponse, renderedCost, renderResponse, sendPayload, sendRendered } from '../http/respond.js';
import { parseId } from '../http/route-params.js';

type WithId = { Params: { id: string } };
type Query = Record<string, string | string[]>;

/** The error tracker (docs/api.md#infrastructure-errors; administrators only: tracker/tracker.service.ts). */
export function infrastructureErrorsRoutes(app: FastifyInstance, { infrastructureErrors: tracker, config, dataVersions }: AppContext): void {
  const base = '/sysadmin_tools/infrastructure/errors';

  const pageOf = (request: FastifyRequest) => parsePagination(request.requestPath.pagination, request.query as Query, config);

  // The list's pages and the records, rendered once and answered as the same bytes until the tracker
  // changes in any process (docs/architecture.md#how-cached-pages-stay-right), within CMI_PAGE_CACHE_BYTES.
  const answers = versionedCache<RenderedResponse>(dataVersions.tracker, { maxBytes: config.pageCacheBytes, costOf: renderedCost });

  /**
   * The answer to this request, from the cache or rendered by `compute`. The key holds the viewer as the
   * domain judges it (id and role: a role changed since is another key), so what the domain refuses
   * someone (it throws, nothing is kept) is never answered to them from here.
   */
  function cached(request: FastifyRequest, reply: FastifyReply, compute: () => Promise<RenderedResponse>): FastifyReply | Promise<FastifyReply> {
    const key = `${request.format}|${request.viewer.role}|${request.viewer.id}|${request.originalUrl}`;
    const hit = answers.peek(key);
    if (hit) return sendRendered(reply, hit);
    return answers.get(key, compute).then((answer) => sendRendered(reply, answer));
  }

  // Not async: a cached answer is sent without a promise.
  app.get(base, { config: { paginated: true } }, (request, reply) =>
    cached(request, reply, async () => {
      const pagination = pageOf(request);
      const { items, total } = await tracker.list(request.viewer, request.query as Query, pagination.perPage, pagination.offset);
      const headers = paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query);
      return renderResponse(request.format, { kind: 'list', resource, records: items }, headers);
    }));

  app.get<WithId>(`${base}/:id`, (request, reply) =>
    cached(request, reply, async () => {
      const record = await tracker.find(request.viewer, parseId(request.params.id));
      return renderResponse(request.format, { kind: 'record', resource, record }, {});
    }));

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
