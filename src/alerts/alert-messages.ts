import { escapeHtml } from '../shared/escape-html.js';
import type { InfrastructureError } from '../tracker/infrastructure-error.js';
import type { AlertKind } from './deliveries.store.js';
import type { DestinationKind } from './alert-routing.js';
import { type WebhookRendering, alertHeadline, chatSafe, consoleLink, errorLink, oneLine, webhookBody } from './webhook-events.js';

/** An email as the outbox keeps it (the body column holds it as JSON): sent as it is on every try. */
export interface MailBody {
  subject: string;
  text: string;
  html: string;
}

/**
 * The body of an alert for a destination of `kind` (docs/alert-routing.md#messages): a webhook gets
 * today's signed JSON; Slack (Mattermost, Rocket.Chat) an incoming webhook's `text` and `blocks`, the
 * console page linked; mail a subject, a plain-text and an HTML part. Every one carries the
 * console page and the API URL.
 */
export function alertBody(
  kind: DestinationKind,
  event: AlertKind | 'report' | 'test',
  record: InfrastructureError,
  publicUrl: string,
  rendering: WebhookRendering,
  detail: Record<string, unknown> = {},
): string {
  if (kind === 'webhook') return webhookBody(event, record, publicUrl, rendering, detail);
  const page = consoleLink(publicUrl, record.id);
  const api = errorLink(publicUrl, record.id);
  if (kind === 'slack') {
    const headline = alertHeadline(event, record, detail);
    return JSON.stringify({
      text: `${headline} ${page}`,
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: `${headline}\n<${page}|Open error #${record.id} in the console>` } },
        { type: 'context', elements: [{ type: 'mrkdwn', text: `API: <${api}|${api}>` }] },
      ],
    });
  }
  const headline = alertHeadline(event, record, detail, (text) => text);
  const mail: MailBody = {
    subject: headline,
    text: `${headline}\n\nConsole: ${page}\nAPI: ${api}\n`,
    html: `<p>${escapeHtml(headline)}</p>\n<p><a href="${escapeHtml(page)}">Open error #${record.id} in the console</a></p>\n<p>API: <a href="${escapeHtml(api)}">${escapeHtml(api)}</a></p>\n`,
  };
  return JSON.stringify(mail);
}

/** The one line a queued alert's body shows (a digest lists them). */
export function summaryOf(kind: DestinationKind, body: string): string {
  try {
    const parsed = JSON.parse(body) as { text?: unknown; subject?: unknown };
    const line = kind === 'email' ? parsed.subject : parsed.text;
    return typeof line === 'string' ? line : '';
  } catch {
    return '';
  }
}

/** Alerts a digest names; the rest it counts. */
export const DIGEST_NAMED = 10;

/**
 * One message standing for `count` alerts to one destination (docs/alert-routing.md#digests): how
 * many, and the first ten of them (their lines, with their links).
 */
export function digestBody(kind: DestinationKind, count: number, lines: readonly string[], publicUrl: string): string {
  const named = lines.slice(0, DIGEST_NAMED);
  const more = count - named.length;
  const headline = `[cmi] ${count} alerts in the last minute`;
  const page = `${publicUrl}/console/errors`;
  if (kind === 'webhook') return JSON.stringify({ event: 'digest', text: `${headline} ${page}`, count, alerts: named, console_url: page });
  if (kind === 'slack') {
    return JSON.stringify({
      text: `${headline} ${page}`,
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: `${headline}; the first ${named.length}:` } },
        { type: 'section', text: { type: 'mrkdwn', text: named.map((line) => `• ${line}`).join('\n') } },
        { type: 'context', elements: [{ type: 'mrkdwn', text: `${more > 0 ? `and ${more} more. ` : ''}<${page}|Open the errors in the console>` }] },
      ],
    });
  }
  const mail: MailBody = {
    subject: headline,
    text: `${headline}; the first ${named.length}:\n\n${named.map((line) => `- ${line}`).join('\n')}\n${more > 0 ? `\nand ${more} more.\n` : ''}\nConsole: ${page}\n`,
    html: `<p>${escapeHtml(headline)}; the first ${named.length}:</p>\n<ul>\n${named.map((line) => `<li>${escapeHtml(line)}</li>`).join('\n')}\n</ul>\n${more > 0 ? `<p>and ${more} more.</p>\n` : ''}<p><a href="${escapeHtml(page)}">Open the errors in the console</a></p>\n`,
  };
  return JSON.stringify(mail);
}

/** The sample a destination's test sends: a made-up error, never a stored one. */
export function sampleError(now: Date): InfrastructureError {
  return {
    id: 0, backtrace: "src/hypervisor/pool.ts:88:in 'allocate'", counter: 1, created_at: now, error_class: 'CmiTestAlert',
    fingerprint: '0'.repeat(64), message: 'This is a test alert from cmi: this destination works.', reported: false, updated_at: now,
  };
}

/** A log source as a silent or back alert shows it (logs/source-silence.ts gives it; alerts know no logs). */
export interface AlertedSource {
  host: string;
  /** '' when its records named none. */
  program: string;
  /** The record as GET .../sources.json has it under `log_source`. */
  rendered: unknown;
}

/** What a silent or back alert says of the silence: the rule, its minutes, and when the source had last sent. */
export interface SilenceDetail {
  rule_id: number;
  minutes: number;
  last_seen_at: string;
  /** `back`: when it sent again. */
  back_at?: string;
}

const sourceName = (source: AlertedSource) => (source.program === '' ? source.host : `${source.host} ${source.program}`);

/** The source's entry in the API list, and its page in the console. */
const sourceLinks = (publicUrl: string, source: AlertedSource) => {
  const query = new URLSearchParams({ host: source.host, program: source.program }).toString();
  return { api: `${publicUrl}/sysadmin_tools/infrastructure/sources.json?${query}`, page: `${publicUrl}/console/sources?${query}` };
};

const minutes = (n: number) => `${n} ${n === 1 ? 'minute' : 'minutes'}`;

/** `[cmi] Source hv-7 libvirtd is silent: nothing for 5 minutes (last at 2026-11-20T10:00:00.000Z)`; `safe` as for alertHeadline. */
export function sourceHeadline(event: 'silent' | 'back', source: AlertedSource, detail: SilenceDetail, safe: (text: string) => string = chatSafe): string {
  const name = safe(oneLine(sourceName(source), 200));
  return event === 'silent'
    ? `[cmi] Source ${name} is silent: nothing for ${minutes(detail.minutes)} (last at ${detail.last_seen_at})`
    : `[cmi] Source ${name} is back: it sent again at ${detail.back_at ?? ''} (silent since ${detail.last_seen_at})`;
}

/**
 * The body of a silent or back alert for a destination of `kind` (docs/alert-routing.md#silent-sources):
 * a webhook's JSON carries the event, a `text` line, the source as the API lists it (`log_source`),
 * its API and console links and `silence`; Slack a `text` and `blocks`; mail a subject and two parts.
 */
export function sourceAlertBody(kind: DestinationKind, event: 'silent' | 'back', source: AlertedSource, publicUrl: string, detail: SilenceDetail): string {
  const { api, page } = sourceLinks(publicUrl, source);
  if (kind === 'webhook') {
    return JSON.stringify({ event, text: `${sourceHeadline(event, source, detail)} ${api}`, log_source: source.rendered, url: api, console_url: page, silence: detail });
  }
  if (kind === 'slack') {
    const headline = sourceHeadline(event, source, detail);
    return JSON.stringify({
      text: `${headline} ${page}`,
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: `${headline}\n<${page}|Open the source in the console>` } },
        { type: 'context', elements: [{ type: 'mrkdwn', text: `API: <${api}|${api}>` }] },
      ],
    });
  }
  const headline = sourceHeadline(event, source, detail, (text) => text);
  const mail: MailBody = {
    subject: headline,
    text: `${headline}\n\nConsole: ${page}\nAPI: ${api}\n`,
    html: `<p>${escapeHtml(headline)}</p>\n<p><a href="${escapeHtml(page)}">Open the source in the console</a></p>\n<p>API: <a href="${escapeHtml(api)}">${escapeHtml(api)}</a></p>\n`,
  };
  return JSON.stringify(mail);
}
