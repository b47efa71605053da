import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { InBatch } from '../tracker/tracker.store.js';
import { enqueueAlerts } from './deliveries.store.js';
import { type WebhookRendering, type WebhookSettings, webhookBody } from './webhook-events.js';

/**
 * What a batch of reports asks of the alerts (docs/reporting-and-alerts.md#alerts): undefined when
 * no alert URL is set; otherwise, run inside each batch's transaction, the alerts it causes queued
 * by the rules (threshold, window, cooldown) with their bodies; answers how many.
 */
export function alertPlanner(settings: WebhookSettings, clock: Clock, rendering: WebhookRendering): ((...batch: Parameters<InBatch>) => Promise<number>) | undefined {
  const url = settings.alertUrl;
  if (url === undefined) return undefined;
  return (trx, outcomes) => enqueueAlerts(trx, outcomes, {
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
