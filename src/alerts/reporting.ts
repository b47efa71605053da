import type { AuditRecorder } from '../audit/audit-trail.js';
import { randomUUID } from 'node:crypto';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import { BadGateway, NotFound } from '../shared/problems.js';
import { retry } from '../shared/retry.js';
import type { TrackerService } from '../tracker/tracker.service.js';
import type { InfrastructureError } from '../tracker/infrastructure-error.js';
import { type WebhookRendering, type WebhookSettings, webhookBody } from './webhook-events.js';
import { type Attempt, displayUrl, postWebhook, succeeded } from './sender.js';
import { signedHeaders } from './signature.js';
import type { TrackerRepository } from '../tracker/tracker.store.js';
import type { WebhookDeliveriesRepository } from './deliveries.store.js';
import type { OutboxLog } from './outbox.js';

/** Tries of one report before it answers 502 (docs/reporting-and-alerts.md#reporting-an-error). */
export const REPORT_TRIES = 3;
/** Occurrences a report carries. */
export const REPORTED_OCCURRENCES = 10;

/**
 * Reporting an error (docs/reporting-and-alerts.md#reporting-an-error): the `reported` transition.
 * With a report URL, the error (with its latest occurrences and its 7-day histogram) is delivered
 * first, signed, in up to three tries of at most `timeoutMs` each, and marked reported only on a 2xx;
 * otherwise 502 and `reported` unchanged. An error already reported answers as it is and sends nothing.
 * Every delivery is kept in the outbox's list with its outcome.
 */
export function errorReporting(
  tracker: TrackerService,
  errors: TrackerRepository,
  deliveries: WebhookDeliveriesRepository,
  clock: Clock,
  settings: WebhookSettings,
  rendering: WebhookRendering,
  log: OutboxLog,
  audit: AuditRecorder,
  routed: { route(record: InfrastructureError): Promise<number>; queued(): void },
) {
  // Cut short when the app closes: a stopping process does not wait for a slow receiver.
  const stopping = new AbortController();
  const markReported = async (id: number, actor: Actor, delivered: boolean): Promise<InfrastructureError> => {
    const record = await errors.markReported(id, actor.id, clock());
    if (!record) throw new NotFound();
    await audit.record(actor, { action: 'infrastructure_error.report', target_type: 'infrastructure_error', target_id: id, changes: { reported: [false, true], delivered } });
    // The rules that route `report` events send it on (docs/alert-routing.md#rules), through the outbox.
    if (await routed.route(record) > 0) routed.queued();
    return record;
  };

  /** Reports being delivered by this process, by error: a second report of one joins the first (one send). */
  const inFlight = new Map<number, Promise<InfrastructureError>>();

  async function deliverReport(actor: Actor, id: number): Promise<InfrastructureError> {
    const record = await tracker.find(actor, id);
    const url = settings.reportUrl;
    if (record.reported || url === undefined) return record.reported ? record : markReported(id, actor, false);
    if (await deliveries.isGone(url)) {
      throw new BadGateway('The report receiver answered 410 Gone before; nothing is sent to it until CMI_REPORT_WEBHOOK_URL changes');
    }
    const [occurrences, histogram] = await Promise.all([
      tracker.occurrences(actor, id, REPORTED_OCCURRENCES, 0),
      tracker.histogram(actor, id, { period: '7d' }),
    ]);
    const body = webhookBody('report', record, settings.publicUrl, rendering, {
      occurrences: rendering.occurrences(occurrences.items),
      histogram: rendering.histogram(histogram),
    });
    const deliveryId = randomUUID();
    const createdAt = clock();
    let attempt: Attempt = { status: null, excerpt: '' };
    let tries = 0;
    // A try the receiver did not take (and that is not the last word: no 410, not stopping) is logged
    // and thrown to retry, which tries again after the backoff.
    const declined = new Error('the receiver did not take the report');
    const tryOnce = async (n: number): Promise<void> => {
      tries = n;
      attempt = await postWebhook(url, body, signedHeaders(settings.secret, deliveryId, body, clock()), settings.timeoutMs, stopping.signal);
      if (succeeded(attempt) || attempt.status === 410 || stopping.signal.aborted) return;
      log.warn({ code: 'CMI_WEBHOOK_FAILED', delivery: deliveryId, kind: 'report', error_id: id, url: displayUrl(url), attempts: tries, status: attempt.status, problem: attempt.problem, response: attempt.excerpt }, 'report delivery failed');
      throw declined;
    };
    if (!stopping.signal.aborted) {
      await retry(tryOnce, {
        attempts: REPORT_TRIES,
        delayMs: (n) => settings.reportBackoffMs * 2 ** (n - 1),
        shouldRetry: (error) => error === declined,
        signal: stopping.signal,
      }).catch((error: unknown) => {
        if (error !== declined) throw error;
      });
    }
    const delivered = succeeded(attempt);
    const stopped = !delivered && stopping.signal.aborted;
    await deliveries.insertFinished({
      delivery_id: deliveryId, kind: 'report', error_id: id, url, body,
      state: delivered ? 'delivered' : 'failed', attempts: tries, last_status: attempt.status,
      created_at: createdAt, delivered_at: delivered ? clock() : null,
    });
    if (delivered) return markReported(id, actor, true);
    if (stopped) throw new BadGateway('cmi is stopping: the report was not delivered; it is not marked reported');
    if (attempt.status === 410) {
      await deliveries.markGone(url, clock());
      log.warn({ code: 'CMI_WEBHOOK_FAILED', delivery: deliveryId, kind: 'report', error_id: id, url: displayUrl(url), attempts: tries, status: 410, response: attempt.excerpt }, 'report receiver answered 410 Gone: nothing more is sent to this URL until it is changed');
      throw new BadGateway('The report receiver answered 410 Gone; nothing is sent to it until CMI_REPORT_WEBHOOK_URL changes');
    }
    const outcome = attempt.status === null ? (attempt.problem ?? 'no answer') : `HTTP ${attempt.status}`;
    throw new BadGateway(`The report receiver did not accept the error after ${tries} tries (last: ${outcome}); it is not marked reported`);
  }

  return {
    async report(actor: Actor, id: number): Promise<InfrastructureError> {
      assertPermitted(actor, 'infrastructure_errors.report');
      const joined = inFlight.get(id);
      if (joined) return joined;
      const delivering = deliverReport(actor, id).finally(() => inFlight.delete(id));
      inFlight.set(id, delivering);
      return delivering;
    },

    /** The app is closing: tries in flight end now (their reports answer 502). */
    stop(): void {
      stopping.abort();
    },

    /** An outbox delivery of a report (a retried one) arrived: the error is reported now. */
    async delivered(errorId: number): Promise<void> {
      await errors.markReported(errorId, null, clock());
    },
  };
}

export type ErrorReporting = ReturnType<typeof errorReporting>;
