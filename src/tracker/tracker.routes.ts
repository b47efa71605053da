import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { QueryParameter, RouteSpec } from '../http/route-spec.js';
import type { TrackerService } from './tracker.service.js';
import type { SavedSearchesService } from './saved-searches.service.js';
import { BREAKDOWN_DIMENSIONS } from './infrastructure-error.js';
import { type PartialChanges, versionedCache } from '../shared/page-cache.js';
import type { TrackerPageTag } from './tracker-changes.js';
import { breakdownGroupResource, errorEnvironmentResource, errorReleaseResource, histogramBucketResource, occurrenceResource } from './error-details.resource.js';
import { infrastructureErrorResource as resource } from './infrastructure-error.resource.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { type RenderedResponse, renderedCost, renderResponse, sendPayload, sendRendered } from '../http/respond.js';
import { permissionsKey } from '../roles/authorization.js';
import { parseId } from '../http/route-params.js';

type WithId = { Params: { id: string } };
type Query = Record<string, string | string[]>;

/** Where the tracker's errors are served. */
export const ERRORS = '/sysadmin_tools/infrastructure/errors';

export const ERROR_FILTERS: readonly QueryParameter[] = [
  { name: 'sort', type: 'string', values: ['updated_at', 'created_at', 'counter'], description: 'the order (default updated_at); ties by id' },
  { name: 'direction', type: 'string', values: ['desc', 'asc'], description: 'default desc' },
  { name: 'reported', type: 'string', values: ['true', 'false'], description: 'errors reported, or not' },
  { name: 'error_class', type: 'string', description: 'errors of exactly that class' },
  { name: 'q', type: 'string', description: 'a search (docs/search.md): host:hv-07 !component:billing counter:>100 last_seen:-1h "free text"' },
  { name: 'since', type: 'datetime', description: 'updated_at at or after' },
  { name: 'until', type: 'datetime', description: 'updated_at at or before' },
  { name: 'host', type: 'string', description: 'at least one occurrence from that host' },
  { name: 'component', type: 'string', description: 'at least one occurrence for that component' },
  { name: 'status', type: 'string', values: ['unresolved', 'resolved', 'ignored', 'snoozed'], description: 'errors in that triage status (default: every status)' },
  { name: 'assignee', type: 'string', description: 'me, none, or a user id: errors assigned to them' },
  { name: 'release', type: 'string', description: 'at least one occurrence of that release' },
  { name: 'environment', type: 'string', description: 'at least one occurrence in that environment' },
];

const DELETE_FILTERS: readonly QueryParameter[] = [
  ...ERROR_FILTERS.filter((filter) => filter.name !== 'sort' && filter.name !== 'direction'),
  { name: 'all', type: 'string', values: ['true', 'false'], description: 'true deletes every error when no filter is given' },
];

export const TRACKER_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: ERRORS, summary: 'A page of infrastructure errors, filtered and sorted', who: 'holders of infrastructure_errors.read', formats: true, paginated: true, query: [...ERROR_FILTERS, { name: 'saved', type: 'string', description: 'a saved search (docs/search.md#saved-searches), by id or name: its query as q (a q beside it narrows it)' }], answers: { 200: { list: resource } } },
  {
    method: 'POST', path: ERRORS, summary: 'Records a report of an error: 201 for a new one, 200 for a known one', who: 'holders of infrastructure_errors.create', formats: true, location: true,
    body: {
      root: 'infrastructure_error',
      fields: [['error_class', 'string'], ['message', 'string'], ['backtrace', 'string[]'], ['fingerprint', 'string'], ['occurred_at', 'datetime'], ['count', 'integer'], ['host', 'string'], ['component', 'string'], ['request_id', 'string'], ['context', 'json']],
      required: ['error_class'],
    },
    answers: { 200: { record: resource }, 201: { record: resource } },
  },
  { method: 'DELETE', path: ERRORS, summary: 'Deletes the errors the filters select', who: 'holders of infrastructure_errors.delete', formats: true, query: DELETE_FILTERS, answers: { 200: { count: 'deleted' } } },
  { method: 'GET', path: `${ERRORS}/:id`, summary: 'One infrastructure error', who: 'holders of infrastructure_errors.read', formats: true, answers: { 200: { record: resource } } },
  { method: 'DELETE', path: `${ERRORS}/:id`, summary: 'Deletes the error and all kept about it', who: 'holders of infrastructure_errors.delete', formats: true, answers: { 204: { empty: true } } },
  { method: 'GET', path: `${ERRORS}/:id/occurrences`, summary: 'The occurrences the error keeps', who: 'holders of infrastructure_errors.read', formats: true, paginated: true, answers: { 200: { list: occurrenceResource } } },
  {
    method: 'GET', path: `${ERRORS}/:id/histogram`, summary: 'Occurrences per hour or day, zero-filled, oldest first', who: 'holders of infrastructure_errors.read', formats: true,
    query: [{ name: 'period', type: 'string', values: ['24h', '7d', '30d'], description: 'default 24h' }],
    answers: { 200: { list: histogramBucketResource } },
  },
  {
    method: 'GET', path: `${ERRORS}/:id/breakdown`, summary: 'Occurrences per host or component, largest first', who: 'holders of infrastructure_errors.read', formats: true, paginated: true,
    query: [{ name: 'by', type: 'string', values: [...BREAKDOWN_DIMENSIONS], description: 'default host' }],
    answers: { 200: { list: breakdownGroupResource } },
  },
  { method: 'GET', path: `${ERRORS}/:id/releases`, summary: 'The releases the error occurred in, the latest seen first', who: 'holders of infrastructure_errors.read', formats: true, paginated: true, answers: { 200: { list: errorReleaseResource } } },
  { method: 'GET', path: `${ERRORS}/:id/environments`, summary: 'The environments the error occurred in, the latest seen first', who: 'holders of infrastructure_errors.read', formats: true, paginated: true, answers: { 200: { list: errorEnvironmentResource } } },
];

export interface TrackerRoutesOptions {
  tracker: TrackerService;
  /** `saved=` on the list: its search in place of the parameter (docs/search.md#saved-searches). */
  savedSearches: SavedSearchesService;
  lists: ListSettings;
  /** The tracker's data version (db/database.ts dataVersions): cached answers are answered while it holds. */
  dataVersion: () => string | undefined;
  /**
   * Run before a cached answer is looked up: snoozes whose time has passed wake (a write, which moves
   * the data version) so no page shows one still snoozed (docs/api.md#snoozing); undefined: nothing to do.
   */
  beforeRead?: () => Promise<unknown> | undefined;
  /** The changes this process's batches tell without moving the version (tracker-changes.ts): kept pages they cannot have changed stay. */
  partialChanges?: PartialChanges<TrackerPageTag>;
}

/** The error tracker (docs/api.md#infrastructure-errors; administrators only: tracker/tracker.service.ts). */
export const trackerRoutes: FastifyPluginCallback<TrackerRoutesOptions> = (app, { tracker, savedSearches, lists, dataVersion, beforeRead, partialChanges }, done) => {
  const base = ERRORS;

  const pageOf = (request: FastifyRequest) => parsePagination(request.requestPath.pagination, request.query as Query, lists);

  // The list's pages and the records, rendered once and answered as the same bytes until the tracker
  // changes in any process (docs/architecture.md#how-cached-pages-stay-right), within CMI_PAGE_CACHE_BYTES.
  const answers = versionedCache<RenderedResponse, TrackerPageTag>(dataVersion, { maxBytes: lists.pageCacheBytes, costOf: renderedCost, ...(lists.pageCacheMeter ? { meteredAs: [lists.pageCacheMeter, 'errors'] as const } : {}) }, partialChanges);

  /**
   * The answer to this request, from the cache or rendered by `compute`. The key holds the viewer as the
   * domain judges it (id and permissions: permissions changed since are another key), so what the domain refuses
   * someone (it throws, nothing is kept) is never answered to them from here.
   */
  function cached(request: FastifyRequest, reply: FastifyReply, compute: () => Promise<RenderedResponse>, tagOf: () => TrackerPageTag | undefined | null, keyed = ''): FastifyReply | Promise<FastifyReply> {
    const key = `${request.format}|${permissionsKey(request.actor)}|${request.actor.id}|${request.originalUrl}${keyed}`;
    const waking = beforeRead?.();
    if (!waking) {
      const hit = answers.peek(key);
      if (hit) return sendRendered(reply, hit);
    }
    // null: a page that goes stale with the clock (a search by time), never kept (so never a hit above).
    const tag = tagOf();
    const answer = () => (tag === null ? compute() : answers.get(key, compute, tag));
    return (waking ? waking.then(answer) : answer()).then((rendered) => sendRendered(reply, rendered));
  }
  const RECORD: TrackerPageTag = { record: true };

  const list = (request: FastifyRequest, reply: FastifyReply, query: Query, keyed?: string) =>
    cached(request, reply, async () => {
      const pagination = pageOf(request);
      const { items, total } = await tracker.list(request.actor, query, pagination.perPage, pagination.offset);
      // The links keep `saved=`, so the next page runs the search as it is then.
      const headers = paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query);
      return renderResponse(request.format, { kind: 'list', resource, records: items }, headers);
    }, () => tracker.listPageTag(request.actor, query), keyed);

  // Not async: a cached answer is sent without a promise. A saved search is read first, and its query
  // keys the kept page (changing the search changes what the same URL answers).
  app.get(base, { config: { paginated: true } }, (request, reply) => {
    const query = request.query as Query;
    if (query['saved'] === undefined) return list(request, reply, query);
    return savedSearches.expand(request.actor, query).then((expanded) => list(request, reply, expanded as Query, `|saved:${String(expanded['q'])}`));
  });

  app.get<WithId>(`${base}/:id`, (request, reply) =>
    cached(request, reply, async () => {
      const record = await tracker.find(request.actor, parseId(request.params.id));
      return renderResponse(request.format, { kind: 'record', resource, record }, {});
    }, () => RECORD));

  /** Another component reports an error: 201 for a new fingerprint, 200 when it counted a known one. */
  app.post(base, async (request, reply) => {
    const { record, created } = await tracker.report(request.actor, request.body);
    reply.code(created ? 201 : 200);
    if (created) reply.header('location', `${base}/${record.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record });
  });

  app.delete<WithId>(`${base}/:id`, async (request, reply) => {
    await tracker.remove(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });

  app.delete(base, async (request, reply) => {
    const deleted = await tracker.removeMatching(request.actor, request.query as Query);
    return sendPayload(reply, request.format, { kind: 'count', name: 'deleted', count: deleted });
  });

  app.get<WithId>(`${base}/:id/occurrences`, { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await tracker.occurrences(request.actor, parseId(request.params.id), pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource: occurrenceResource, records: items });
  });

  app.get<WithId>(`${base}/:id/histogram`, async (request, reply) => {
    const buckets = await tracker.histogram(request.actor, parseId(request.params.id), request.query as Query);
    return sendPayload(reply, request.format, { kind: 'list', resource: histogramBucketResource, records: buckets });
  });

  app.get<WithId>(`${base}/:id/breakdown`, { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await tracker.breakdown(request.actor, parseId(request.params.id), request.query as Query, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource: breakdownGroupResource, records: items });
  });

  for (const [path, dimension, resource] of [['releases', 'release', errorReleaseResource], ['environments', 'environment', errorEnvironmentResource]] as const) {
    app.get<WithId>(`${base}/:id/${path}`, { config: { paginated: true } }, async (request, reply) => {
      const pagination = pageOf(request);
      const { items, total } = await tracker.facetValues(request.actor, parseId(request.params.id), dimension, pagination.perPage, pagination.offset);
      reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
      return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
    });
  }
  done();
};
