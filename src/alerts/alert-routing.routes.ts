import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { alertDestinationResource, alertRuleResource } from './alert-routing.resource.js';
import type { AlertRoutingService } from './alert-routing.service.js';
import { deliveryResource } from './delivery.resource.js';

type WithId = { Params: { id: string } };
type Query = Record<string, string | string[]>;

export const DESTINATIONS = '/sysadmin_tools/alert_destinations';
export const RULES = '/sysadmin_tools/alert_rules';

const DESTINATION_BODY = {
  root: 'alert_destination',
  fields: [
    ['label', 'string'], ['kind', 'string'], ['url', 'string'], ['secret', 'string'], ['smtp_host', 'string'], ['smtp_port', 'integer'],
    ['smtp_security', 'string'], ['smtp_user', 'string'], ['smtp_password', 'string'], ['from', 'string'], ['to', 'string[]'], ['enabled', 'boolean'],
  ],
} as const;
const RULE_BODY = {
  root: 'alert_rule',
  fields: [
    ['label', 'string'], ['events', 'string[]'], ['component', 'string'], ['host', 'string'], ['error_class', 'string'], ['error_class_prefix', 'string'],
    ['spike_threshold', 'integer'], ['spike_window', 'integer'], ['cooldown', 'integer'], ['destination_ids', 'id[]'], ['enabled', 'boolean'],
  ],
} as const;

export const ALERT_ROUTING_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: DESTINATIONS, summary: 'A page of alert destinations (never their secrets)', who: 'holders of alert_destinations.read', formats: true, paginated: true, answers: { 200: { list: alertDestinationResource } } },
  { method: 'POST', path: DESTINATIONS, summary: 'Creates an alert destination: webhook, slack or email', who: 'holders of alert_destinations.manage', formats: true, location: true, body: { ...DESTINATION_BODY, required: ['label', 'kind'] }, answers: { 201: { record: alertDestinationResource } } },
  { method: 'GET', path: `${DESTINATIONS}/:id`, summary: 'One alert destination', who: 'holders of alert_destinations.read', formats: true, answers: { 200: { record: alertDestinationResource } } },
  { method: 'PUT', path: `${DESTINATIONS}/:id`, summary: 'Changes the fields the body names', who: 'holders of alert_destinations.manage', formats: true, body: DESTINATION_BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: `${DESTINATIONS}/:id`, summary: 'Deletes an alert destination; its pending deliveries fail', who: 'holders of alert_destinations.manage', formats: true, answers: { 204: { empty: true } } },
  { method: 'POST', path: `${DESTINATIONS}/:id/test`, summary: 'Sends a sample alert through the outbox; answers its delivery once tried', who: 'holders of alert_destinations.manage', formats: true, answers: { 200: { record: deliveryResource } } },
  { method: 'GET', path: `${DESTINATIONS}/:id/deliveries`, summary: 'The destination\'s latest deliveries, newest first', who: 'holders of alert_destinations.read', formats: true, answers: { 200: { list: deliveryResource } } },
  { method: 'GET', path: RULES, summary: 'A page of alert rules', who: 'holders of alert_rules.read', formats: true, paginated: true, answers: { 200: { list: alertRuleResource } } },
  { method: 'POST', path: RULES, summary: 'Creates an alert rule', who: 'holders of alert_rules.manage', formats: true, location: true, body: { ...RULE_BODY, required: ['label', 'events', 'destination_ids'] }, answers: { 201: { record: alertRuleResource } } },
  { method: 'GET', path: `${RULES}/:id`, summary: 'One alert rule', who: 'holders of alert_rules.read', formats: true, answers: { 200: { record: alertRuleResource } } },
  { method: 'PUT', path: `${RULES}/:id`, summary: 'Changes the fields the body names', who: 'holders of alert_rules.manage', formats: true, body: RULE_BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: `${RULES}/:id`, summary: 'Deletes an alert rule', who: 'holders of alert_rules.manage', formats: true, answers: { 204: { empty: true } } },
];

export interface AlertRoutingRoutesOptions {
  routing: AlertRoutingService;
  lists: ListSettings;
  /** CMI_PUBLIC_URL when set: a test's links start with it; otherwise with the address the request reached. */
  publicUrl: string | undefined;
}

/** Alert destinations and rules (docs/api.md#alert-routing); who may do what: alerts/alert-routing.service.ts. */
export const alertRoutingRoutes: FastifyPluginCallback<AlertRoutingRoutesOptions> = (app, { routing, lists, publicUrl }, done) => {
  const pageOf = (request: FastifyRequest) => parsePagination(request.requestPath.pagination, request.query as Query, lists);
  const baseOf = (request: FastifyRequest) => publicUrl ?? `${request.protocol}://${request.host}`;

  app.get(DESTINATIONS, { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await routing.listDestinations(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource: alertDestinationResource, records: items });
  });
  app.post(DESTINATIONS, async (request, reply) => {
    const destination = await routing.createDestination(request.actor, request.body);
    reply.code(201).header('location', `${DESTINATIONS}/${destination.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource: alertDestinationResource, record: destination });
  });
  app.get<WithId>(`${DESTINATIONS}/:id`, async (request, reply) => {
    const destination = await routing.getDestination(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource: alertDestinationResource, record: destination });
  });
  app.put<WithId>(`${DESTINATIONS}/:id`, async (request, reply) => {
    await routing.updateDestination(request.actor, parseId(request.params.id), request.body);
    return reply.code(204).send();
  });
  app.delete<WithId>(`${DESTINATIONS}/:id`, async (request, reply) => {
    await routing.removeDestination(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });
  app.post<WithId>(`${DESTINATIONS}/:id/test`, async (request, reply) => {
    const delivery = await routing.testDestination(request.actor, parseId(request.params.id), baseOf(request));
    return sendPayload(reply, request.format, { kind: 'record', resource: deliveryResource, record: delivery });
  });
  app.get<WithId>(`${DESTINATIONS}/:id/deliveries`, async (request, reply) => {
    const items = await routing.destinationDeliveries(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'list', resource: deliveryResource, records: items });
  });

  app.get(RULES, { config: { paginated: true } }, async (request, reply) => {
    const pagination = pageOf(request);
    const { items, total } = await routing.listRules(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource: alertRuleResource, records: items });
  });
  app.post(RULES, async (request, reply) => {
    const rule = await routing.createRule(request.actor, request.body);
    reply.code(201).header('location', `${RULES}/${rule.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource: alertRuleResource, record: rule });
  });
  app.get<WithId>(`${RULES}/:id`, async (request, reply) => {
    const rule = await routing.getRule(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource: alertRuleResource, record: rule });
  });
  app.put<WithId>(`${RULES}/:id`, async (request, reply) => {
    await routing.updateRule(request.actor, parseId(request.params.id), request.body);
    return reply.code(204).send();
  });
  app.delete<WithId>(`${RULES}/:id`, async (request, reply) => {
    await routing.removeRule(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });
  done();
};
