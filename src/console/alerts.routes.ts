import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Unprocessable } from '../shared/problems.js';
import { parseId } from '../http/route-params.js';
import { assertPermitted } from '../roles/authorization.js';
import { consoleRoute, type ConsoleServices, formOf, pageContext, sendPage } from './console-page.js';
import { type AlertsView, alertDestinationPage, alertsPage } from './alerts-pages.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

const NOTICES: Record<string, string> = {
  'destination-added': 'Destination added: send it a test.',
  'destination-deleted': 'Destination deleted.',
  'rule-added': 'Rule added.',
  'rule-deleted': 'Rule deleted.',
};
const noticeOf = (query: WithId['Querystring']) => (typeof query.notice === 'string' ? NOTICES[query.notice] : undefined);

/** The most destinations and rules the page lists. */
const LISTED = 1000;

/** Alert routing (docs/console.md#alerts): destinations and rules, a test per destination; every form with the console's CSRF token. */
export function consoleAlertsRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { alertRouting, publicUrl } = services;
  const baseOf = (request: FastifyRequest) => publicUrl ?? `${request.protocol}://${request.host}`;
  const view = async (request: FastifyRequest, extra: Partial<AlertsView> = {}): Promise<AlertsView> => ({
    destinations: (await alertRouting.listDestinations(request.viewer, LISTED, 0)).items,
    rules: (await alertRouting.listRules(request.viewer, LISTED, 0)).items,
    ...extra,
  });

  app.get<WithId>('/alerts', consoleRoute(), async (request, reply) =>
    sendPage(reply, alertsPage(pageContext(request, services), await view(request, { notice: noticeOf(request.query) }))));

  app.post('/alerts/destinations', consoleRoute(), async (request, reply) => {
    assertPermitted(request.viewer, 'alert_destinations.manage');
    const form = formOf(request);
    const values: Record<string, string> = {};
    for (const name of ['label', 'kind', 'url', 'secret', 'smtp_host', 'smtp_port', 'smtp_security', 'smtp_user', 'smtp_password', 'from', 'to']) {
      const value = form.get(name);
      if (value !== null && value !== '') values[name] = value;
    }
    const kind = values.kind;
    // Only what the chosen kind uses is sent: the SMTP security select always has a value.
    if (kind !== 'email') for (const name of ['smtp_host', 'smtp_port', 'smtp_security', 'smtp_user', 'smtp_password', 'from', 'to']) delete values[name];
    try {
      const destination = await alertRouting.createDestination(request.viewer, values);
      return reply.code(303).header('location', `/console/alerts/destinations/${destination.id}?notice=destination-added`).send();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      // Secrets are never written back into a page, nor the URL: a chat's URL's path is its secret (docs/security.md).
      const shown = Object.fromEntries(Object.entries(values).filter(([name]) => name !== 'secret' && name !== 'smtp_password' && name !== 'url'));
      return sendPage(reply, alertsPage(pageContext(request, services), await view(request, { destinationValues: shown, destinationErrors: error.messages })), 422);
    }
  });

  app.get<WithId>('/alerts/destinations/:id', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const destination = await alertRouting.getDestination(request.viewer, id);
    const deliveries = await alertRouting.destinationDeliveries(request.viewer, id);
    return sendPage(reply, alertDestinationPage(pageContext(request, services), destination, deliveries, noticeOf(request.query)));
  });

  app.post<WithId>('/alerts/destinations/:id/test', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const delivery = await alertRouting.testDestination(request.viewer, id, baseOf(request));
    const destination = await alertRouting.getDestination(request.viewer, id);
    const deliveries = await alertRouting.destinationDeliveries(request.viewer, id);
    const notice = delivery.state === 'delivered' ? 'Test alert delivered.' : `Test alert not delivered: ${delivery.last_error ?? 'not tried yet'}; it is retried as any alert.`;
    return sendPage(reply, alertDestinationPage(pageContext(request, services), destination, deliveries, notice));
  });

  app.post<WithId>('/alerts/destinations/:id/delete', consoleRoute(), async (request, reply) => {
    await alertRouting.removeDestination(request.viewer, parseId(request.params.id));
    return reply.code(303).header('location', '/console/alerts?notice=destination-deleted').send();
  });

  app.post('/alerts/rules', consoleRoute(), async (request, reply) => {
    assertPermitted(request.viewer, 'alert_rules.manage');
    const form = formOf(request);
    const values: Record<string, string | string[]> = { label: form.get('label') ?? '', events: form.getAll('events'), destination_ids: form.getAll('destination_ids') };
    for (const name of ['component', 'host', 'error_class', 'error_class_prefix']) {
      const value = form.get(name);
      if (value !== null && value !== '') values[name] = value;
    }
    try {
      await alertRouting.createRule(request.viewer, values);
      return reply.code(303).header('location', '/console/alerts?notice=rule-added').send();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return sendPage(reply, alertsPage(pageContext(request, services), await view(request, { ruleValues: values, ruleErrors: error.messages })), 422);
    }
  });

  app.post<WithId>('/alerts/rules/:id/delete', consoleRoute(), async (request, reply) => {
    await alertRouting.removeRule(request.viewer, parseId(request.params.id));
    return reply.code(303).header('location', '/console/alerts?notice=rule-deleted').send();
  });
}
