import type { InfrastructureError } from '../tracker/infrastructure-error.js';
import type { AlertKind } from './deliveries.store.js';
import type { AllowedHosts } from './address-guard.js';

/** The settings of reports and alerts (docs/operations.md#configuration; config.ts reads them). */
export interface WebhookSettings {
  /** Where `POST .../errors/:id/report` delivers the error; undefined: it only marks it. */
  reportUrl: string | undefined;
  /** Where alerts go; undefined: none are queued. */
  alertUrl: string | undefined;
  /** The HMAC key of every delivery (set whenever a URL is). */
  secret: string;
  /** The address links in webhook bodies start with. */
  publicUrl: string;
  /** One try's limit, in ms (reports and alerts). */
  timeoutMs: number;
  /** A report's second try waits this long (ms), its third twice as long. */
  reportBackoffMs: number;
  /** An alert's first retry waits this long (ms), doubling up to an hour. */
  retryBaseMs: number;
  /** Alerts are retried until this many seconds after they were queued. */
  retryForSeconds: number;
  /** How often each process reads the outbox for deliveries due, in ms. */
  pollIntervalMs: number;
  /** A claim on a delivery outlives its try by this much (ms). */
  leaseMarginMs: number;
  /** A spike: more than `spikeThreshold` occurrences within `spikeWindowSeconds`. */
  spikeThreshold: number;
  spikeWindowSeconds: number;
  /** No second spike alert for an error within this many seconds. */
  cooldownSeconds: number;
  /** Messages an alert destination is sent a minute at most (docs/alert-routing.md#digests). */
  alertRateLimit: number;
  /** The internal hosts alert destinations may be sent to (CMI_ALERT_ALLOWED_HOSTS; docs/alert-routing.md#internal-addresses). */
  allowedHosts: AllowedHosts;
}

/** How a webhook body shows records: as the JSON API shows them (server/ and cli/ pass render/'s). */
export interface WebhookRendering {
  /** The record's JSON object, as GET .../errors/:id.json has it under `infrastructure_error`. */
  error(record: InfrastructureError): unknown;
  /** The JSON array GET .../occurrences.json answers. */
  occurrences(items: ReadonlyArray<object>): unknown;
  /** The JSON array GET .../histogram.json answers. */
  histogram(buckets: ReadonlyArray<{ start: Date; count: number }>): unknown;
}

/** The longest message a `text` line quotes. */
const TEXT_MESSAGE_CHARS = 200;

/** One line of text: control characters as spaces, cut with … past `max` characters. */
export function oneLine(text: string, max: number): string {
  const characters = [...text.replace(/\p{Cc}+/gu, ' ').trim()];
  return characters.length <= max ? characters.join('') : `${characters.slice(0, max - 1).join('')}…`;
}

/**
 * Reported text as a chat message shows it, never as markup that acts: `&`, `<` and `>` escaped as
 * Slack and Mattermost require (no `<!channel>`, no disguised `<url|label>` link), and a zero-width
 * space after the `@` of `@channel`, `@here`, `@all` and `@everyone` (no one is paged by a message).
 */
export const chatSafe = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/@(?=(channel|here|all|everyone)\b)/gi, '@\u200b');

const times = (n: number) => `${n} ${n === 1 ? 'occurrence' : 'occurrences'}`;

/** The record's address in the API. */
export const errorLink = (publicUrl: string, id: number) => `${publicUrl}/sysadmin_tools/infrastructure/errors/${id}.json`;

/** The record's page in the console: where a person goes from the message (docs/alert-routing.md#links). */
export const consoleLink = (publicUrl: string, id: number) => `${publicUrl}/console/errors/${id}`;

/**
 * What happened, in one line without a link: `[cmi] New error #12: RangeError: pool exhausted`.
 * `safe` makes the reported text safe where it is shown (chatSafe for chat, nothing for mail's text).
 */
export function alertHeadline(event: AlertKind | 'report' | 'test', record: InfrastructureError, detail: Record<string, unknown>, safe: (text: string) => string = chatSafe): string {
  const what = safe(`${oneLine(record.error_class, 100)}: ${oneLine(record.message, TEXT_MESSAGE_CHARS)}`);
  if (event === 'test') return `[cmi] Test alert: ${what}`;
  return event === 'new'
    ? `[cmi] New error #${record.id}: ${what}`
    : event === 'regression'
      ? `[cmi] Error #${record.id} regressed (it was resolved; ${times(record.counter)} in all): ${what}`
    : event === 'spike'
      ? `[cmi] Error #${record.id} is spiking (${times(Number((detail.spike as { occurrences: number }).occurrences))} in ${(detail.spike as { window_seconds: number }).window_seconds} s): ${what}`
      : `[cmi] Error #${record.id} reported (${times(record.counter)}): ${what}`;
}

/**
 * The JSON body of a webhook (docs/reporting-and-alerts.md#the-body): the event, a one-line `text`
 * that chat incoming webhooks show as it is, the record, its API link (`url`), its console page
 * (`console_url`), and the event's own detail.
 */
export function webhookBody(
  event: AlertKind | 'report' | 'test',
  record: InfrastructureError,
  publicUrl: string,
  rendering: WebhookRendering,
  detail: Record<string, unknown> = {},
): string {
  const link = errorLink(publicUrl, record.id);
  const text = `${alertHeadline(event, record, detail)} ${link}`;
  return JSON.stringify({ event, text, infrastructure_error: rendering.error(record), url: link, console_url: consoleLink(publicUrl, record.id), ...detail });
}
