import type { FastifyInstance } from 'fastify';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import type { TrackerService, TrackerAlerts } from '../tracker/tracker.service.js';
import type { TrackerRepository } from '../tracker/tracker.store.js';
import { alertRoutingRoutes } from './alert-routing.routes.js';
import { alertRoutingService } from './alert-routing.service.js';
import { alertRoutingRepository } from './alert-routing.store.js';
import { deliveriesRoutes } from './deliveries.routes.js';
import { webhookDeliveries } from './deliveries.service.js';
import { webhookDeliveriesRepository } from './deliveries.store.js';
import { type OutboxLog, type WebhookOutbox, webhookOutbox } from './outbox.js';
import { alertPlanner, routeReport } from './planner.js';
import { errorReporting } from './reporting.js';
import type { WebhookSettings } from './webhook-events.js';
import { webhookRendering } from './webhook-json.js';

/**
 * The outbox's wake, handed out before the outbox exists: the tracker's batches and the reports queue
 * deliveries for it, yet it is made after them (it tells the reports what it delivered). What queues
 * is given `wake`; `wakes(outbox)` points it at the outbox once the alerts are made, before the app
 * serves a request.
 */
export function outboxWake() {
  let outbox: Pick<WebhookOutbox, 'wake'> | undefined;
  return {
    /** Something was queued by this process: the outbox sends it now rather than at its next poll. */
    wake: (): void => {
      if (outbox === undefined) throw new Error('the webhook outbox was woken before it was made (app/app.ts makes it before the app serves)');
      outbox.wake();
    },
    wakes(target: Pick<WebhookOutbox, 'wake'>): void {
      outbox = target;
    },
  };
}

/**
 * What the tracker's batches queue their alerts with, inside each batch's transaction
 * (docs/architecture.md#reports-and-alerts): the planner of CMI_ALERT_* and the alert rules, and
 * the outbox's wake once the batch has committed.
 */
export function alertsInBatch(settings: WebhookSettings, clock: Clock, rulesVersion: () => string | undefined, wake: () => void): TrackerAlerts {
  return { queue: alertPlanner(settings, clock, webhookRendering, rulesVersion), queued: wake };
}

/** What reports and alerts are made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface AlertsPieces {
  database: Database;
  clock: Clock;
  audit: AuditRecorder;
  /** The webhooks' settings (CMI_REPORT_URL, CMI_ALERT_*, CMI_WEBHOOK_*). */
  settings: WebhookSettings;
  /** CMI_PUBLIC_URL when set (the alert routing's answers name it). */
  publicUrl: string | undefined;
  /** The app's log: failures of reports and alerts go there, never to fault capture (a failed alert must not raise one). */
  log: OutboxLog;
  /** The tracker's service and store: an error is reported from them, and marked reported there. */
  tracker: TrackerService;
  errors: TrackerRepository;
  /** The outbox's wake (outboxWake), for what this feature queues itself. */
  wake: () => void;
  lists: ListSettings;
}

/**
 * Reports and alerts (docs/reporting-and-alerts.md) and alert routing (docs/alert-routing.md):
 * gives the reporting of an error, the routing service and the outbox that sends every delivery
 * (started by the app once it is ready); registers the deliveries' and the alert routing's routes.
 */
export function alertsPlugin({ database, clock, audit, settings, publicUrl, log, tracker, errors, wake, lists }: AlertsPieces) {
  const deliveries = webhookDeliveriesRepository(database);
  // Destinations and rules in the database, sent by the same outbox.
  const routingRepository = alertRoutingRepository(database);
  const reporting = errorReporting(tracker, errors, deliveries, clock, settings, webhookRendering, log, audit, {
    route: (record) => routeReport(routingRepository, record, { publicUrl: settings.publicUrl, rendering: webhookRendering, clock }),
    queued: wake,
  });
  const outbox = webhookOutbox(deliveries, clock, settings, log, async (delivery) => {
    if (delivery.kind === 'report' && delivery.destination_id === null) await reporting.delivered(delivery.error_id);
  }, routingRepository);
  const routing = alertRoutingService(routingRepository, deliveries, clock, settings, webhookRendering, wake, audit);
  return {
    reporting,
    routing,
    outbox,
    /** Deliveries still to be sent (the metrics' outbox backlog). */
    outboxPending: () => deliveries.countPending(),
    /** The deliveries' list and the alert routing's destinations and rules. */
    async register(app: FastifyInstance): Promise<void> {
      await app.register(deliveriesRoutes, { errorReporting: reporting, webhookDeliveries: webhookDeliveries(deliveries, clock, audit, wake), lists });
      await app.register(alertRoutingRoutes, { routing, lists, publicUrl });
    },
  };
}
