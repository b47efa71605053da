import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { signedHeaders } from './signature.js';
import { type Attempt, displayUrl, postWebhook, succeeded } from './sender.js';
import type { Delivery, DeliveryKind, WebhookDeliveriesRepository } from './deliveries.store.js';

export interface OutboxSettings {
  /** Where reports and alerts go now: a delivery is sent to the URL of its kind when it is tried. */
  reportUrl: string | undefined;
  alertUrl: string | undefined;
  secret: string;
  /** One try's limit, in ms. */
  timeoutMs: number;
  /** The first retry waits this long (ms); each next one twice as long, at most an hour. */
  retryBaseMs: number;
  /** A delivery is retried until this many seconds after it was created; then it is failed. */
  retryForSeconds: number;
  /** How often the outbox is read for deliveries due (ms). */
  pollIntervalMs: number;
}

/** What the outbox tells the log: every failure with its status, never the secret, never a whole answer. */
export interface OutboxLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** Deliveries one claim takes at most (each error's oldest pending one), sent at once. */
const CLAIM_LIMIT = 32;
/** A claim outlives the try it covers by this much, so a slow try is never sent twice. */
const LEASE_MARGIN_MS = 30_000;
const MAX_BACKOFF_MS = 3_600_000;

/** The wait before try `attempts + 1`: `base × 2^(attempts - 1)`, at most an hour. */
export const backoffMs = (baseMs: number, attempts: number) => Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(attempts - 1, 40));

/**
 * The delivery loop (docs/reporting-and-alerts.md#the-outbox): every poll (and at once when this
 * process queued something) it claims the deliveries due, sends each once, signed, and records the
 * outcome: delivered on a 2xx; a 410 stops every delivery to that URL; any other failure is tried
 * again after an exponential backoff until `retryForSeconds` after it was created. Claims are
 * leases in the database, so of several processes exactly one sends a delivery at a time, and a
 * killed process's claims expire for another to take. Its failures are logged, never captured as
 * infrastructure errors (a failure to alert must not raise an alert).
 */
export function webhookOutbox(
  repository: WebhookDeliveriesRepository,
  clock: Clock,
  settings: OutboxSettings,
  log: OutboxLog,
  onDelivered: (delivery: Delivery) => Promise<void>,
) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = true;
  const stop = new AbortController();
  const tokens = new Set<string>();

  /**
   * The URL a delivery of `kind` goes to: this process's setting when it is tried, not the one it was
   * queued under, so a changed URL takes the backlog along and an unset one sends nothing more.
   */
  const urlFor = (kind: DeliveryKind) => (kind === 'report' ? settings.reportUrl : settings.alertUrl);
  const sendable: DeliveryKind[] = [
    ...(settings.reportUrl === undefined ? [] : ['report' as const]),
    ...(settings.alertUrl === undefined ? [] : ['new' as const, 'spike' as const, 'regression' as const]),
  ];

  const record = async (delivery: Delivery, url: string, token: string, attempt: Attempt) => {
    const attempts = delivery.attempts + 1;
    const fields = { code: 'CMI_WEBHOOK_FAILED', delivery: delivery.delivery_id, kind: delivery.kind, error_id: delivery.error_id, url: displayUrl(url), attempts };
    if (succeeded(attempt)) {
      await repository.markDelivered(delivery.id, token, url, attempt.status as number, attempts, clock());
      await onDelivered(delivery);
      return;
    }
    if (attempt.status === 410) {
      await repository.markGone(url, clock());
      await repository.markAttemptFailed(delivery.id, token, url, 410, attempts, undefined);
      log.warn({ ...fields, status: 410, response: attempt.excerpt }, 'webhook receiver answered 410 Gone: nothing more is sent to this URL until it is changed');
      return;
    }
    const next = new Date(clock().getTime() + backoffMs(settings.retryBaseMs, attempts));
    const giveUp = next.getTime() > delivery.created_at.getTime() + settings.retryForSeconds * 1000;
    await repository.markAttemptFailed(delivery.id, token, url, attempt.status, attempts, giveUp ? undefined : next);
    log.warn(
      { ...fields, status: attempt.status, problem: attempt.problem, response: attempt.excerpt, next_attempt_at: giveUp ? null : next.toISOString() },
      giveUp ? 'webhook delivery failed; giving up' : 'webhook delivery failed; will retry',
    );
  };

  const deliver = async (delivery: Delivery, token: string) => {
    // Claimed only in kinds this process has a URL for.
    const url = urlFor(delivery.kind) as string;
    if (await repository.isGone(url)) {
      await repository.markAttemptFailed(delivery.id, token, url, 410, delivery.attempts, undefined);
      log.warn({ code: 'CMI_WEBHOOK_FAILED', delivery: delivery.delivery_id, url: displayUrl(url), status: 410 }, 'webhook not sent: its receiver answered 410 Gone');
      return;
    }
    const headers = signedHeaders(settings.secret, delivery.delivery_id, delivery.body, clock());
    const attempt = await postWebhook(url, delivery.body, headers, settings.timeoutMs, stop.signal);
    // A try cut short by shutdown is no try: its claim is given back (below) for the next process.
    if (stop.signal.aborted) return;
    await record(delivery, url, token, attempt);
  };

  /** One round: claims and sends until nothing is due. */
  const round = async () => {
    do {
      again = false;
      const token = randomUUID();
      tokens.add(token);
      try {
        const now = clock();
        const claimed = await repository.claim(token, now, new Date(now.getTime() + settings.timeoutMs + LEASE_MARGIN_MS), CLAIM_LIMIT, sendable);
        await Promise.all(claimed.map((delivery) => deliver(delivery, token)));
        if (claimed.length === CLAIM_LIMIT) again = true;
        if (stop.signal.aborted) await repository.release(token);
      } finally {
        tokens.delete(token);
      }
    } while (again && !stopped);
  };

  const run = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    running = round()
      .catch((error: unknown) => log.warn({ code: 'CMI_WEBHOOK_OUTBOX', problem: error instanceof Error ? error.message : String(error) }, 'webhook outbox could not be read or written; trying again'))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(run, settings.pollIntervalMs).unref();
      });
  };

  return {
    start(): void {
      stopped = false;
      timer = setTimeout(run, 0).unref();
    },
    /** Something was queued by this process: send it now rather than at the next poll. */
    wake(): void {
      if (!stopped) setImmediate(run);
    },
    /** Stops polling, cuts the tries in flight short and gives their claims back. */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      stop.abort();
      await running;
    },
  };
}

export type WebhookOutbox = ReturnType<typeof webhookOutbox>;
