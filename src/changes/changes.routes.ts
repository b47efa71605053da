import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { changeRecord, changeResource as resource } from './change.resource.js';
import type { ChangesService } from './changes.service.js';

type WithId = { Params: { id: string } };
type Query = Record<string, string | string[]>;

export const CHANGES = '/sysadmin_tools/infrastructure/changes';
/** The tracker's errors, whose suspects this feature answers (the tracker sits below it: docs/architecture.md#layers). */
const ERRORS = '/sysadmin_tools/infrastructure/errors';
const CHANGE_BODY = {
  root: 'change',
  fields: [['kind', 'string'], ['title', 'string'], ['release', 'string'], ['started_at', 'datetime'], ['ended_at', 'datetime'], ['hosts', 'string[]'], ['components', 'string[]']],
} as const;

export const CHANGES_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: CHANGES, summary: 'A page of changes to the cloud', who: 'holders of changes.read', formats: true, paginated: true, answers: { 200: { list: resource } } },
  { method: 'POST', path: CHANGES, summary: 'Records a change to the cloud', who: 'holders of changes.manage or changes.create', formats: true, location: true, body: { ...CHANGE_BODY, required: ['kind', 'title'] }, answers: { 201: { record: resource } } },
  { method: 'GET', path: `${CHANGES}/:id`, summary: 'One change', who: 'holders of changes.read', formats: true, answers: { 200: { record: resource } } },
  { method: 'PUT', path: `${CHANGES}/:id`, summary: 'Changes the fields the body names', who: 'holders of changes.manage', formats: true, body: CHANGE_BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: `${CHANGES}/:id`, summary: 'Deletes a change', who: 'holders of changes.manage', formats: true, answers: { 204: { empty: true } } },
  {
    method: 'GET', path: `${ERRORS}/:id/suspect_changes`, summary: 'The changes in the error\'s scope that ran when it was first seen or ended within the hour before',
    who: 'holders of changes.read and infrastructure_errors.read', formats: true, paginated: true, answers: { 200: { list: resource } },
  },
];

export interface ChangesRoutesOptions {
  changes: ChangesService;
  lists: ListSettings;
}

/** Changes to the cloud (docs/changes.md); who may do what: changes/changes.service.ts. */
export const changesRoutes: FastifyPluginCallback<ChangesRoutesOptions> = (app, { changes, lists }, done) => {
  app.get(CHANGES, { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Query, lists);
    const { items, total } = await changes.list(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items.map(changeRecord) });
  });

  app.post(CHANGES, async (request, reply) => {
    const change = await changes.create(request.actor, request.body);
    reply.code(201).header('location', `${CHANGES}/${change.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: changeRecord(change) });
  });

  app.get<WithId>(`${CHANGES}/:id`, async (request, reply) => {
    const change = await changes.get(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: changeRecord(change) });
  });

  app.put<WithId>(`${CHANGES}/:id`, async (request, reply) => {
    await changes.update(request.actor, parseId(request.params.id), request.body);
    return reply.code(204).send();
  });

  app.delete<WithId>(`${CHANGES}/:id`, async (request, reply) => {
    await changes.remove(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });

  app.get<WithId>(`${ERRORS}/:id/suspect_changes`, { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Query, lists);
    const { items, total } = await changes.suspects(request.actor, parseId(request.params.id), pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items.map(changeRecord) });
  });
  done();
};
