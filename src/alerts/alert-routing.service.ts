import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { FieldErrors, NotFound } from '../shared/problems.js';
import { type AlertRule, type DestinationFields, type RuleFields, type ServedDestination, type ServedRule, readDestination, readRule, servedDestination, servedRule } from './alert-routing.js';
import { type AlertRoutingRepository, deliveryTarget } from './alert-routing.store.js';
import { alertBody, sampleError } from './alert-messages.js';
import { type ListedDelivery, listed } from './deliveries.service.js';
import type { WebhookDeliveriesRepository } from './deliveries.store.js';
import type { WebhookRendering } from './webhook-events.js';

/** Deliveries a destination's list shows: its latest. */
export const RECENT_DELIVERIES = 20;

/**
 * Alert destinations and rules (docs/alert-routing.md; docs/api.md#alert-routing). Reading needs
 * `alert_destinations.read` / `alert_rules.read`; every change, `...manage` (administrators). Each
 * change is one method here, so whatever must follow every change (an audit row) has one place to go.
 */
export function alertRoutingService(
  repository: AlertRoutingRepository,
  deliveries: WebhookDeliveriesRepository,
  clock: Clock,
  settings: { timeoutMs: number },
  rendering: WebhookRendering,
  wake: () => void,
) {
  const destinationOf = async (id: number) => {
    const destination = await repository.findDestination(id);
    if (!destination) throw new NotFound();
    return destination;
  };
  const ruleOf = async (id: number): Promise<AlertRule> => {
    const rule = await repository.findRule(id);
    if (!rule) throw new NotFound();
    return rule;
  };
  /** A rule's destinations must exist (422 naming `destination_ids`). */
  const assertDestinations = async (fields: RuleFields) => {
    const missing = await repository.missingDestinations(fields.destination_ids);
    if (missing.length > 0) {
      const errors = new FieldErrors();
      errors.add('destination_ids', `names no destination: ${missing.join(', ')}`);
      errors.throwIfAny();
    }
  };

  return {
    async listDestinations(actor: Actor, limit: number, offset: number): Promise<Page<ServedDestination>> {
      assertPermitted(actor, 'alert_destinations.read');
      const { items, total } = await repository.pageDestinations(limit, offset);
      return { items: items.map(servedDestination), total };
    },

    async getDestination(actor: Actor, id: number): Promise<ServedDestination> {
      assertPermitted(actor, 'alert_destinations.read');
      return servedDestination(await destinationOf(id));
    },

    async createDestination(actor: Actor, body: unknown): Promise<ServedDestination> {
      assertPermitted(actor, 'alert_destinations.manage');
      return servedDestination(await repository.createDestination(readDestination(body, undefined), clock()));
    },

    async updateDestination(actor: Actor, id: number, body: unknown): Promise<void> {
      assertPermitted(actor, 'alert_destinations.manage');
      const current: DestinationFields = await destinationOf(id);
      if (!(await repository.updateDestination(id, readDestination(body, current), clock()))) throw new NotFound();
    },

    /** Deletes it: it leaves every rule (a rule left with none is disabled), and what was pending to it fails. */
    async removeDestination(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'alert_destinations.manage');
      if (!(await repository.removeDestination(id, clock()))) throw new NotFound();
    },

    /**
     * Sends a sample alert through the outbox (docs/alert-routing.md#testing-a-destination) and
     * answers its delivery once it was tried (or, past one try's timeout, as it stands): delivered,
     * or with the reason it was not. `base` is where its links point.
     */
    async testDestination(actor: Actor, id: number, base: string): Promise<ListedDelivery> {
      assertPermitted(actor, 'alert_destinations.manage');
      const destination = await destinationOf(id);
      const now = clock();
      const queued = await deliveries.insertPending({
        delivery_id: randomUUID(), kind: 'test', error_id: 0, url: deliveryTarget(destination),
        body: alertBody(destination.kind, 'test', sampleError(now), base, rendering), destination_id: id,
      }, now);
      wake();
      const deadline = Date.now() + settings.timeoutMs + 2000;
      let delivery = queued;
      while (Date.now() < deadline) {
        await sleep(25);
        delivery = (await deliveries.findById(queued.id)) ?? delivery;
        if (delivery.state !== 'pending' || delivery.attempts > 0) break;
      }
      return listed(delivery);
    },

    async destinationDeliveries(actor: Actor, id: number): Promise<ListedDelivery[]> {
      assertPermitted(actor, 'alert_destinations.read');
      await destinationOf(id);
      return (await deliveries.recentForDestination(id, RECENT_DELIVERIES)).map(listed);
    },

    async listRules(actor: Actor, limit: number, offset: number): Promise<Page<ServedRule>> {
      assertPermitted(actor, 'alert_rules.read');
      const { items, total } = await repository.pageRules(limit, offset);
      return { items: items.map(servedRule), total };
    },

    async getRule(actor: Actor, id: number): Promise<ServedRule> {
      assertPermitted(actor, 'alert_rules.read');
      return servedRule(await ruleOf(id));
    },

    async createRule(actor: Actor, body: unknown): Promise<ServedRule> {
      assertPermitted(actor, 'alert_rules.manage');
      const fields = readRule(body, undefined);
      await assertDestinations(fields);
      return servedRule(await repository.createRule(fields, clock()));
    },

    async updateRule(actor: Actor, id: number, body: unknown): Promise<void> {
      assertPermitted(actor, 'alert_rules.manage');
      const fields = readRule(body, await ruleOf(id));
      await assertDestinations(fields);
      if (!(await repository.updateRule(id, fields, clock()))) throw new NotFound();
    },

    async removeRule(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'alert_rules.manage');
      if (!(await repository.removeRule(id))) throw new NotFound();
    },
  };
}

export type AlertRoutingService = ReturnType<typeof alertRoutingService>;
