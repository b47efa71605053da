import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { logRuleResource as resource } from './log-rule.resource.js';
import type { LogRulesService } from './log-rules.service.js';

type WithId = { Params: { id: string } };

export const LOG_RULES = '/sysadmin_tools/infrastructure/log_rules';
const RULE_BODY = {
  root: 'log_rule',
  fields: [['position', 'integer'], ['label', 'string'], ['program', 'string'], ['pattern', 'string'], ['error_class', 'string'], ['component', 'string'], ['enabled', 'boolean']],
} as const;

export const LOG_RULES_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: LOG_RULES, summary: 'A page of the log sources\' operator rules, in the order they are tried', who: 'holders of ingest_keys.read', formats: true, paginated: true, answers: { 200: { list: resource } } },
  { method: 'POST', path: LOG_RULES, summary: 'Creates a rule that makes matching log records errors', who: 'holders of ingest_keys.create', formats: true, location: true, body: { ...RULE_BODY, required: ['label', 'pattern', 'error_class'] }, answers: { 201: { record: resource } } },
  { method: 'GET', path: `${LOG_RULES}/:id`, summary: 'One log rule', who: 'holders of ingest_keys.read', formats: true, answers: { 200: { record: resource } } },
  { method: 'PUT', path: `${LOG_RULES}/:id`, summary: 'Changes the fields the body names', who: 'holders of ingest_keys.update', formats: true, body: RULE_BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: `${LOG_RULES}/:id`, summary: 'Deletes a log rule', who: 'holders of ingest_keys.delete', formats: true, answers: { 204: { empty: true } } },
];

export interface LogRulesRoutesOptions {
  rules: LogRulesService;
  lists: ListSettings;
}

/** The log sources' operator rules (docs/log-sources.md#operator-rules); who may do what: log-rules.service.ts. */
export const logRulesRoutes: FastifyPluginCallback<LogRulesRoutesOptions> = (app, { rules, lists }, done) => {
  app.get(LOG_RULES, { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Record<string, string | string[]>, lists);
    const { items, total } = await rules.list(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items });
  });

  app.post(LOG_RULES, async (request, reply) => {
    const rule = await rules.create(request.actor, request.body);
    reply.code(201).header('location', `${LOG_RULES}/${rule.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: rule });
  });

  app.get<WithId>(`${LOG_RULES}/:id`, async (request, reply) => {
    const rule = await rules.get(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: rule });
  });

  app.put<WithId>(`${LOG_RULES}/:id`, async (request, reply) => {
    await rules.update(request.actor, parseId(request.params.id), request.body);
    return reply.code(204).send();
  });

  app.delete<WithId>(`${LOG_RULES}/:id`, async (request, reply) => {
    await rules.remove(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });
  done();
};
