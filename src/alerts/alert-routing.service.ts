import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { AuditRecorder } from '../audit/audit-trail.js';
import { difference, fieldsOf, REDACTED } from '../audit/audit-event.js';
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
import { type AllowedHosts, INTERNAL_REFUSAL, checkedAddress, hostVerdict } from './address-guard.js';

/** The host of a destination's URL (readDestination took only http and https URLs), or null. */
const urlHost = (url: string | null): string | null => (url === null ? null : new URL(url).hostname);

/** Deliveries a destination's list shows: its latest. */
export const RECENT_DELIVERIES = 20;

/**
 * Alert destinations and rules (docs/alert-routing.md; docs/api.md#alert-routing). Reading needs
 * `alert_destinations.read` / `alert_rules.read`; every change, `...manage` (administrators). Each
 * change is one method here, so whatever must follow every change (an audit row) has one place to go.
 */
/** Alerts one error's chart marks at most. */
const ALERTS_MARKED = 100;

export function alertRoutingService(
  repository: AlertRoutingRepository,
  deliveries: WebhookDeliveriesRepository,
  clock: Clock,
  settings: { timeoutMs: number; allowedHosts: AllowedHosts },
  rendering: WebhookRendering,
  wake: () => void,
  audit: AuditRecorder,
) {
  /**
   * The audit row of a change (docs/security.md#what-is-audited), from the records as served: a URL by
   * its origin only (a Slack URL's path is its secret), and a secret or password given only as changed.
   */
  const record = (actor: Actor, action: string, targetType: string, id: number, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: targetType, target_id: id, changes });
  /** The secret fields a change replaced, each as `[redacted]`: that it changed, never to what. */
  const secretsChanged = (before: DestinationFields, after: DestinationFields): Record<string, string> =>
    Object.fromEntries((['url', 'secret', 'smtp_password'] as const).filter((name) => before[name] !== after[name]).map((name) => [name, REDACTED]));

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

  /**
   * A destination must not be, nor resolve to, an internal address CMI_ALERT_ALLOWED_HOSTS does not
   * allow (422 naming `url` or `smtp_host`; docs/alert-routing.md#internal-addresses). A name that
   * does not resolve now is taken: each try checks again what it resolves to then.
   */
  const assertNotInternal = async (fields: DestinationFields) => {
    const [name, host] = fields.kind === 'email' ? ['smtp_host', fields.smtp_host] as const : ['url', urlHost(fields.url)] as const;
    if (host === null) return;
    const verdict = hostVerdict(host, settings.allowedHosts);
    let refused = verdict === 'refused';
    if (verdict === 'resolve') {
      refused = await checkedAddress(host, settings.allowedHosts, settings.timeoutMs).then(() => false, (error: { code?: unknown }) => error.code === INTERNAL_REFUSAL);
    }
    if (refused) {
      const errors = new FieldErrors();
      errors.add(name, 'is or resolves to an internal address (loopback, private, link-local, unique-local or unspecified), which alerts are not sent to unless CMI_ALERT_ALLOWED_HOSTS allows it');
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
      const fields = readDestination(body, undefined);
      await assertNotInternal(fields);
      const destination = servedDestination(await repository.createDestination(fields, clock()));
      await record(actor, 'alert_destination.create', 'alert_destination', destination.id, { ...fieldsOf(destination), to: JSON.parse(destination.to) as unknown });
      return destination;
    },

    async updateDestination(actor: Actor, id: number, body: unknown): Promise<void> {
      assertPermitted(actor, 'alert_destinations.manage');
      const current = await destinationOf(id);
      const next = readDestination(body, current);
      await assertNotInternal(next);
      if (!(await repository.updateDestination(id, next, clock()))) throw new NotFound();
      const shown = ['label', 'kind', 'smtp_host', 'smtp_port', 'smtp_security', 'smtp_user', 'from', 'to', 'enabled'];
      await record(actor, 'alert_destination.update', 'alert_destination', id, { ...difference(current, next, shown), ...secretsChanged(current, next) });
    },

    /** Deletes it: it leaves every rule (a rule left with none is disabled), and what was pending to it fails. */
    async removeDestination(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'alert_destinations.manage');
      const before = await repository.findDestination(id);
      if (!(await repository.removeDestination(id, clock()))) throw new NotFound();
      await record(actor, 'alert_destination.delete', 'alert_destination', id, before ? { label: before.label, kind: before.kind } : {});
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
      await record(actor, 'alert_destination.test', 'alert_destination', id, { delivery_id: queued.delivery_id });
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

    /**
     * Deliveries failing in the last 24 h, by destination with its label (docs/console.md#overview):
     * webhook_deliveries.read and alert_destinations.read. A destination of null is the built-in
     * webhook (CMI_ALERT_WEBHOOK_URL) or a report's receiver.
     */
    async failingDeliveries(actor: Actor): Promise<Array<{ destination: { id: number; label: string } | null; failed: number; retrying: number }>> {
      assertPermitted(actor, 'webhook_deliveries.read');
      assertPermitted(actor, 'alert_destinations.read');
      const failing = await deliveries.failingByDestination(new Date(clock().getTime() - 86_400_000));
      const ids = failing.flatMap((row) => (row.destination_id === null ? [] : [row.destination_id]));
      const labels = new Map((await repository.destinations(ids)).map((d) => [d.id, d.label]));
      return failing.map((row) => ({
        destination: row.destination_id === null ? null : { id: row.destination_id, label: labels.get(row.destination_id) ?? `destination ${row.destination_id}` },
        failed: row.failed, retrying: row.retrying,
      }));
    },

    /**
     * The alerts sent about an error since `since` (the error page marks them on its chart): kind
     * and time only, to whoever may read the error (no destination, URL or body).
     */
    async alertsSentFor(actor: Actor, errorId: number, since: Date): Promise<Array<{ kind: string; at: Date }>> {
      assertPermitted(actor, 'infrastructure_errors.read');
      return deliveries.alertsSentFor(errorId, since, ALERTS_MARKED);
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
      const rule = servedRule(await repository.createRule(fields, clock()));
      await record(actor, 'alert_rule.create', 'alert_rule', rule.id, fieldsOf(rule));
      return rule;
    },

    async updateRule(actor: Actor, id: number, body: unknown): Promise<void> {
      assertPermitted(actor, 'alert_rules.manage');
      const before = await ruleOf(id);
      const fields = readRule(body, before);
      await assertDestinations(fields);
      if (!(await repository.updateRule(id, fields, clock()))) throw new NotFound();
      const after = await repository.findRule(id);
      await record(actor, 'alert_rule.update', 'alert_rule', id, after ? difference(fieldsOf(servedRule(before)), fieldsOf(servedRule(after))) : {});
    },

    async removeRule(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'alert_rules.manage');
      const before = await repository.findRule(id);
      if (!(await repository.removeRule(id))) throw new NotFound();
      await record(actor, 'alert_rule.delete', 'alert_rule', id, before ? { label: before.label } : {});
    },
  };
}

export type AlertRoutingService = ReturnType<typeof alertRoutingService>;
