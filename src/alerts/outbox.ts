import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { signedHeaders } from './signature.js';
import { type Attempt, displayUrl, postWebhook, succeeded } from './sender.js';
import type { Delivery, DeliveryKind, WebhookDeliveriesRepository } from './deliveries.store.js';
import type { AlertDestination } from './alert-routing.js';
import { deliveryTarget } from './alert-routing.store.js';
import { type MailBody, digestBody, summaryOf } from './alert-messages.js';
import { sendMail } from './mailer.js';
import { type AllowedHosts, INTERNAL_REFUSAL, guardedLookup, hostVerdict } from './address-guard.js';
import { STATUS_CODES } from 'node:http';

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
  /** A claim outlives the try it covers by this much (ms), so a slow try is never sent twice. */
  leaseMarginMs: number;
  /** The address links in messages start with (digests link the console's errors). */
  publicUrl: string;
  /** Messages a destination is sent a minute at most; what is due beyond goes as one digest (docs/alert-routing.md#digests). */
  alertRateLimit: number;
  /** The internal hosts destinations may be sent to (CMI_ALERT_ALLOWED_HOSTS; docs/alert-routing.md#internal-addresses). */
  allowedHosts: AllowedHosts;
}

/** What the outbox reads of the destinations when it sends (alerts/alert-routing.store.ts). */
export interface DestinationLookup {
  destinations(ids: readonly number[]): Promise<AlertDestination[]>;
}

/** One try of a message to a destination, whatever its kind. */
interface Sent {
  ok: boolean;
  status: number | null;
  excerpt: string;
  problem?: string;
}

/** Deliveries one digest folds at most; the rest wait for the next minute's. */
const DIGEST_CLAIM_LIMIT = 5000;
const MINUTE_MS = 60_000;

/** Why a try to CMI_*_WEBHOOK_URL failed, in a few words, as the deliveries list shows it: the receiver's status and the start of its answer. */
const reasonOf = (sent: Sent): string => sent.problem ?? (sent.status === null ? 'no answer' : `HTTP ${sent.status}${sent.excerpt ? `: ${sent.excerpt}` : ''}`);

/**
 * Why a try to a destination failed, as its test and its deliveries show it: the status and fixed
 * words, never what the receiver answered, which a destination pointed at a service that is no
 * receiver would read back (docs/alert-routing.md#internal-addresses).
 */
const routedReasonOf = (kind: AlertDestination['kind'], sent: Sent): string => {
  if (sent.problem !== undefined) return sent.problem;
  if (sent.status === null) return 'no answer';
  if (kind === 'email') return `SMTP ${sent.status}`;
  return `HTTP ${sent.status}${STATUS_CODES[sent.status] ? ` ${STATUS_CODES[sent.status]}` : ''}`;
};

/** What the outbox tells the log: every failure with its status, never the secret, never a whole answer. */
export interface OutboxLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** Deliveries one claim takes at most (each error's oldest pending one), sent at once. */
const CLAIM_LIMIT = 32;
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
  lookup: DestinationLookup,
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
      await repository.markAttemptFailed(delivery.id, token, url, 410, attempts, undefined, 'HTTP 410 Gone');
      log.warn({ ...fields, status: 410, response: attempt.excerpt }, 'webhook receiver answered 410 Gone: nothing more is sent to this URL until it is changed');
      return;
    }
    const next = new Date(clock().getTime() + backoffMs(settings.retryBaseMs, attempts));
    const giveUp = next.getTime() > delivery.created_at.getTime() + settings.retryForSeconds * 1000;
    await repository.markAttemptFailed(delivery.id, token, url, attempt.status, attempts, giveUp ? undefined : next, reasonOf({ ok: false, ...attempt }));
    log.warn(
      { ...fields, status: attempt.status, problem: attempt.problem, response: attempt.excerpt, next_attempt_at: giveUp ? null : next.toISOString() },
      giveUp ? 'webhook delivery failed; giving up' : 'webhook delivery failed; will retry',
    );
  };

  const deliver = async (delivery: Delivery, token: string) => {
    // Claimed only in kinds this process has a URL for.
    const url = urlFor(delivery.kind) as string;
    if (await repository.isGone(url)) {
      await repository.markAttemptFailed(delivery.id, token, url, 410, delivery.attempts, undefined, 'HTTP 410 Gone');
      log.warn({ code: 'CMI_WEBHOOK_FAILED', delivery: delivery.delivery_id, url: displayUrl(url), status: 410 }, 'webhook not sent: its receiver answered 410 Gone');
      return;
    }
    const headers = signedHeaders(settings.secret, delivery.delivery_id, delivery.body, clock());
    const attempt = await postWebhook(url, delivery.body, headers, settings.timeoutMs, stop.signal);
    // A try cut short by shutdown is no try: its claim is given back (below) for the next process.
    if (stop.signal.aborted) return;
    await record(delivery, url, token, attempt);
  };

  /** Sends one message to a destination: signed JSON, a chat webhook's JSON, or a mail. */
  const sendTo = async (destination: AlertDestination, messageId: string, body: string): Promise<Sent> => {
    if (destination.kind === 'email') {
      let mail: MailBody;
      try {
        mail = JSON.parse(body) as MailBody;
      } catch {
        return { ok: false, status: null, excerpt: '', problem: 'unreadable mail body' };
      }
      return sendMail({
        host: destination.smtp_host ?? '', port: destination.smtp_port ?? 25, security: destination.smtp_security ?? 'starttls',
        user: destination.smtp_user, password: destination.smtp_password, from: destination.from ?? '', to: destination.to,
      }, mail, messageId, settings.timeoutMs, settings.allowedHosts, stop.signal);
    }
    // Checked where it is given and again here, at each try: against the address it is, or each one
    // its name resolves to when connecting (docs/alert-routing.md#internal-addresses).
    let host: string;
    try {
      host = new URL(destination.url ?? '').hostname;
    } catch {
      return { ok: false, status: null, excerpt: '', problem: 'invalid URL' };
    }
    if (hostVerdict(host, settings.allowedHosts) === 'refused') return { ok: false, status: null, excerpt: '', problem: INTERNAL_REFUSAL };
    const headers = destination.kind === 'webhook'
      ? signedHeaders(destination.secret ?? '', messageId, body, clock())
      : { 'content-type': 'application/json', 'user-agent': 'cmi-webhooks' };
    const attempt: Attempt = await postWebhook(destination.url ?? '', body, headers, settings.timeoutMs, stop.signal, { lookup: guardedLookup(settings.allowedHosts) });
    return { ok: succeeded(attempt), ...attempt };
  };

  /** The outcome of one try of `delivery` (or of the digest that carried it): delivered, retried later, or failed. */
  const recordRouted = async (destination: AlertDestination, delivery: Delivery, token: string, sent: Sent, sentAs: string) => {
    const attempts = delivery.attempts + 1;
    const target = deliveryTarget(destination);
    if (sent.ok) {
      await repository.markDelivered(delivery.id, token, target, sent.status ?? 0, attempts, clock(), sentAs);
      return;
    }
    const next = new Date(clock().getTime() + backoffMs(settings.retryBaseMs, attempts));
    // A 410 Gone is final: the receiver says it is no more.
    const giveUp = sent.status === 410 || next.getTime() > delivery.created_at.getTime() + settings.retryForSeconds * 1000;
    const reason = routedReasonOf(destination.kind, sent);
    await repository.markAttemptFailed(delivery.id, token, target, sent.status, attempts, giveUp ? undefined : next, reason);
    log.warn({
      code: 'CMI_ALERT_FAILED', delivery: delivery.delivery_id, kind: delivery.kind, error_id: delivery.error_id, destination: destination.id,
      url: displayUrl(target), attempts, status: sent.status, problem: reason, next_attempt_at: giveUp ? null : next.toISOString(),
    }, giveUp ? 'alert delivery failed; giving up' : 'alert delivery failed; will retry');
  };

  /**
   * The claimed deliveries of one destination (docs/alert-routing.md#digests): each sent as it is
   * while the destination has had fewer than `alertRateLimit` messages in the last minute; past that,
   * everything due to it goes as one digest, or, when the minute's messages are spent, waits for
   * the minute to end (and then goes as one digest).
   */
  const deliverRouted = async (id: number, destination: AlertDestination | undefined, claimed: Delivery[], token: string, now: Date, until: Date) => {
    // A deleted destination's deliveries fail; a disabled one's too, but for its test.
    const dropped = claimed.filter((d) => destination === undefined || (!destination.enabled && d.kind !== 'test'));
    for (const delivery of dropped) {
      await repository.markAttemptFailed(delivery.id, token, delivery.url, null, delivery.attempts, undefined, destination === undefined ? 'destination deleted' : 'destination disabled');
    }
    if (destination === undefined) return;
    claimed = claimed.filter((d) => !dropped.includes(d));
    if (claimed.length === 0) return;
    const recent = await repository.recentMessages(id, new Date(now.getTime() - MINUTE_MS));
    const allowance = settings.alertRateLimit - recent.count;
    if (claimed.length <= allowance) {
      // At most one per error (the claim's order), so at once.
      await Promise.all(claimed.map(async (delivery) => {
        const sent = await sendTo(destination, delivery.delivery_id, delivery.body);
        if (stop.signal.aborted) return;
        await recordRouted(destination, delivery, token, sent, delivery.delivery_id);
      }));
      return;
    }
    if (allowance <= 0) {
      const at = new Date(Math.max(now.getTime(), (recent.oldest ?? now).getTime() + MINUTE_MS) + 1);
      await repository.defer(claimed.map((d) => d.id), token, at);
      return;
    }
    const folded = await repository.claimDestination(token, id, now, until, DIGEST_CLAIM_LIMIT);
    const digestId = randomUUID();
    const body = digestBody(destination.kind, folded.length, folded.map((d) => summaryOf(destination.kind, d.body)), settings.publicUrl);
    const sent = await sendTo(destination, digestId, body);
    if (stop.signal.aborted) return;
    if (sent.ok) {
      await repository.markDigestDelivered(folded.map((d) => d.id), token, deliveryTarget(destination), sent.status ?? 0, clock(), digestId);
      log.info({ code: 'CMI_ALERT_DIGEST', destination: id, delivery: digestId, alerts: folded.length }, 'alerts sent as one digest');
      return;
    }
    for (const delivery of folded) await recordRouted(destination, delivery, token, sent, digestId);
  };

  /** One round: claims and sends until nothing is due. */
  const round = async () => {
    do {
      again = false;
      const token = randomUUID();
      tokens.add(token);
      try {
        const now = clock();
        const until = new Date(now.getTime() + settings.timeoutMs + settings.leaseMarginMs);
        const claimed = await repository.claim(token, now, until, CLAIM_LIMIT, sendable);
        const byDestination = new Map<number, Delivery[]>();
        for (const delivery of claimed) {
          if (delivery.destination_id === null) continue;
          const list = byDestination.get(delivery.destination_id) ?? [];
          list.push(delivery);
          byDestination.set(delivery.destination_id, list);
        }
        const destinations = new Map((await lookup.destinations([...byDestination.keys()])).map((d) => [d.id, d]));
        await Promise.all([
          ...claimed.filter((delivery) => delivery.destination_id === null).map((delivery) => deliver(delivery, token)),
          ...[...byDestination].map(([id, list]) => deliverRouted(id, destinations.get(id), list, token, now, until)),
        ]);
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
