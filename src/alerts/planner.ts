import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { type WebhookRendering, type WebhookSettings, webhookBody } from './webhook-events.js';
import type { AlertPlan } from './deliveries.store.js';

/**
 * What a batch of reports asks of the alerts (docs/reporting-and-alerts.md#alerts): undefined when
 * no alert URL is set; otherwise, for each batch, the rules (threshold, window, cooldown) and the
 * bodies, which the batch's transaction queues with it.
 */
export function alertPlanner(settings: WebhookSettings, clock: Clock, rendering: WebhookRendering): (() => AlertPlan) | undefined {
  const url = settings.alertUrl;
  if (url === undefined) return undefined;
  return () => ({
    url,
    now: clock(),
    spikeThreshold: settings.spikeThreshold,
    spikeWindowMs: settings.spikeWindowSeconds * 1000,
    cooldownMs: settings.cooldownSeconds * 1000,
    body: (kind, record, windowCount) => webhookBody(kind, record, settings.publicUrl, rendering,
      kind === 'spike' ? { spike: { occurrences: windowCount, window_seconds: settings.spikeWindowSeconds, threshold: settings.spikeThreshold } } : {}),
    newDeliveryId: randomUUID,
  });
}
