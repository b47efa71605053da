import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { ERROR_FILTERS, ERRORS } from './tracker.routes.js';
import { activityResource, noteResource, triageResource } from './triage.resource.js';
import type { TriageService } from './triage.service.js';

type WithId = { Params: { id: string } };
type Query = Record<string, string | string[]>;

const TRIAGE_BODY = {
  root: 'triage',
  fields: [['status', 'string'], ['assignee_id', 'integer'], ['snoozed_until', 'datetime'], ['snooze_occurrences', 'integer'], ['in_release', 'string'], ['in_next_release', 'boolean']],
} as const;

const BULK_FILTERS = [
  ...ERROR_FILTERS.filter((filter) => filter.name !== 'sort' && filter.name !== 'direction'),
  { name: 'all', type: 'string', values: ['true', 'false'], description: 'true changes every error when neither ids nor a filter is given' },
] as const;

export const TRIAGE_ROUTES: readonly RouteSpec[] = [
  {
    method: 'PUT', path: `${ERRORS}/triage`, summary: 'Changes the triage of the errors the ids or the filters select: {"triage": {...}, "ids": [...]}', who: 'holders of infrastructure_errors.triage', formats: true,
    query: BULK_FILTERS, body: { root: 'bulk', fields: [['triage', 'json'], ['ids', 'id[]']], required: ['triage'] }, answers: { 200: { count: 'changed' } },
  },
  { method: 'GET', path: `${ERRORS}/:id/triage`, summary: 'The triage of an error: status, snooze, assignee', who: 'holders of infrastructure_errors.read', formats: true, answers: { 200: { record: triageResource } } },
  { method: 'PUT', path: `${ERRORS}/:id/triage`, summary: 'Changes the triage of an error', who: 'holders of infrastructure_errors.triage', formats: true, body: TRIAGE_BODY, answers: { 200: { record: triageResource } } },
  { method: 'GET', path: `${ERRORS}/:id/notes`, summary: 'The notes on an error, oldest first', who: 'holders of infrastructure_errors.read', formats: true, paginated: true, answers: { 200: { list: noteResource } } },
  {
    method: 'POST', path: `${ERRORS}/:id/notes`, summary: 'Adds a note (plain text) to an error', who: 'holders of infrastructure_errors.notes', formats: true,
    body: { root: 'note', fields: [['body', 'string']], required: ['body'] }, answers: { 201: { record: noteResource } },
  },
  { method: 'DELETE', path: `${ERRORS}/:id/notes/:note_id`, summary: 'Deletes a note: its author, or holders of infrastructure_errors.notes.delete', who: 'holders of infrastructure_errors.notes', formats: true, answers: { 204: { empty: true } } },
  { method: 'GET', path: `${ERRORS}/:id/activity`, summary: 'What happened to an error and who did it, oldest first', who: 'holders of infrastructure_errors.read', formats: true, paginated: true, answers: { 200: { list: activityResource } } },
];

export interface TriageRoutesOptions {
  triage: TriageService;
  lists: ListSettings;
}

/** Error triage (docs/api.md#error-triage); who may do what: tracker/triage.service.ts. */
export const triageRoutes: FastifyPluginCallback<TriageRoutesOptions> = (app, { triage, lists }, done) => {
  const pageOf = (request: { requestPath: { pagination: Parameters<typeof parsePagination>[0] }; query: unknown }) =>
    parsePagination(request.requestPath.pagination, request.query as Query, lists);

  app.put(`${ERRORS}/triage`, async (request, reply) => {
    const changed = await triage.changeMany(request.actor, request.query as Query, request.body);
    return sendPayload(reply, request.format, { kind: 'count', name: 'changed', count: changed });
  });

  app.get<WithId>(`${ERRORS}/:id/triage`, async (request, reply) => {
    const record = await triage.get(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource: triageResource, record });
  });

  app.put<WithId>(`${ERRORS}/:id/triage`, async (request, reply) => {
    const record = await triage.change(request.actor, parseId(request.params.id), request.body);
    return sendPayload(reply, request.format, { kind: 'record', resource: triageResource, record });
  });

  app.get<WithId>(`${ERRORS}/:id/notes`, { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await triage.notes(request.actor, parseId(request.params.id), pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource: noteResource, records: items });
  });

  app.post<WithId>(`${ERRORS}/:id/notes`, async (request, reply) => {
    const note = await triage.addNote(request.actor, parseId(request.params.id), request.body);
    reply.code(201);
    return sendPayload(reply, request.format, { kind: 'record', resource: noteResource, record: note });
  });

  app.delete<{ Params: { id: string; note_id: string } }>(`${ERRORS}/:id/notes/:note_id`, async (request, reply) => {
    await triage.deleteNote(request.actor, parseId(request.params.id), parseId(request.params.note_id));
    return reply.code(204).send();
  });

  app.get<WithId>(`${ERRORS}/:id/activity`, { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await triage.activity(request.actor, parseId(request.params.id), pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath, request.query as Query));
    return sendPayload(reply, request.format, { kind: 'list', resource: activityResource, records: items });
  });
  done();
};
