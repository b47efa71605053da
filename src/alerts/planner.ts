import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { InBatch, InfrastructureError } from '../tracker/infrastructure-error.js';
import { enqueueAlerts, pendingDelivery } from './deliveries.store.js';
import { type AlertRoutingRepository, deliveryTarget, enqueueRoutedAlerts, keptActiveRules } from './alert-routing.store.js';
import { type AlertDestination, ruleMatches } from './alert-routing.js';
import { alertBody } from './alert-messages.js';
import { type WebhookRendering, type WebhookSettings, webhookBody } from './webhook-events.js';

/**
 * What a batch of reports asks of the alerts (docs/reporting-and-alerts.md#alerts,
 * docs/alert-routing.md): run inside each batch's transaction, the alerts it causes are queued with
 * their bodies, to the built-in destination of CMI_ALERT_WEBHOOK_URL when it is set (by its
 * threshold, window and cooldown) and to each destination the alert rules route them to; answers how many.
 * The rules are kept in memory while `rulesVersion` (Database.dataVersions.alerts) holds.
 */
export function alertPlanner(settings: WebhookSettings, clock: Clock, rendering: WebhookRendering, rulesVersion: () => string | undefined): (...batch: Parameters<InBatch>) => Promise<number> {
  const url = settings.alertUrl;
  const rules = keptActiveRules(rulesVersion);
  return async (trx, outcomes) => {
    const now = clock();
    const builtIn = url === undefined ? 0 : await enqueueAlerts(trx, outcomes, {
      url,
      now,
      spikeThreshold: settings.spikeThreshold,
      spikeWindowMs: settings.spikeWindowSeconds * 1000,
      cooldownMs: settings.cooldownSeconds * 1000,
      body: (kind, record, windowCount) => webhookBody(kind, record, settings.publicUrl, rendering,
        kind === 'spike' ? { spike: { occurrences: windowCount, window_seconds: settings.spikeWindowSeconds, threshold: settings.spikeThreshold } } : {}),
      newDeliveryId: randomUUID,
    });
    const routed = await enqueueRoutedAlerts(trx, outcomes, {
      now,
      spikeThreshold: settings.spikeThreshold,
      spikeWindowSeconds: settings.spikeWindowSeconds,
      cooldownSeconds: settings.cooldownSeconds,
      body: (destination, event, record, detail) => alertBody(destination.kind, event, record, settings.publicUrl, rendering, detail),
      newDeliveryId: randomUUID,
      rules,
    });
    return builtIn + routed;
  };
}

/**
 * An error was marked reported (docs/alert-routing.md#rules): each enabled rule routing `report`
 * whose conditions it meets (its hosts and components: those its occurrences named) queues a
 * `report` alert to its enabled destinations, once to each; answers how many.
 */
export async function routeReport(
  repository: AlertRoutingRepository,
  record: InfrastructureError,
  options: { publicUrl: string; rendering: WebhookRendering; clock: Clock },
): Promise<number> {
  const { rules, hosts, components } = await repository.reportRouting(record.id);
  const destinations = new Map<number, AlertDestination>();
  for (const { rule, destinations: theirs } of rules) {
    if (!ruleMatches(rule, { error_class: record.error_class, hosts, components })) continue;
    for (const destination of theirs) destinations.set(destination.id, destination);
  }
  if (destinations.size === 0) return 0;
  const now = options.clock().toISOString();
  await repository.queue([...destinations.values()].sort((a, b) => a.id - b.id).map((destination) => pendingDelivery({
    delivery_id: randomUUID(), kind: 'report', error_id: record.id, url: deliveryTarget(destination),
    body: alertBody(destination.kind, 'report', record, options.publicUrl, options.rendering), destination_id: destination.id,
  }, now)));
  return destinations.size;
}
