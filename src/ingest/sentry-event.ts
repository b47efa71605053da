import { createHash } from 'node:crypto';
import { parseDatetime } from '../shared/datetime.js';
import { errorReportLimits } from '../shared/limits.js';
import { fingerprint as defaultFingerprint, truncateBacktrace, truncateErrorClass, truncateMessage } from '../tracker/grouping.js';
import { type ErrorReport, facetsOf } from '../tracker/infrastructure-error.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined);
/** PostgreSQL stores no U+0000: it becomes U+FFFD, as nothing an SDK sends is refused for it. */
const clean = (value: string): string => (value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value);

/** The error class of an event that carries no exception type (captureMessage). */
export const MESSAGE_CLASS = 'Message';

/** `exception` as a list (sentry-go) or `{values: [...]}`; the primary exception is the last. */
function exceptionsOf(event: Json): Json[] {
  const exception = event.exception;
  const list = Array.isArray(exception) ? exception : isObject(exception) && Array.isArray(exception.values) ? exception.values : [];
  return list.filter(isObject);
}

/** `message` as a string or `{formatted, message}`, else `logentry`. */
function messageOf(event: Json): string | undefined {
  for (const candidate of [event.message, event.logentry]) {
    if (typeof candidate === 'string' && candidate !== '') return candidate;
    if (isObject(candidate)) {
      const value = text(candidate.formatted) ?? text(candidate.message);
      if (value !== undefined && value !== '') return value;
    }
  }
  return undefined;
}

/** Frames innermost first, one a line: `file:line:in 'function'` (docs/sentry.md#what-is-recorded). */
export function backtraceOf(stacktrace: unknown): string {
  if (!isObject(stacktrace) || !Array.isArray(stacktrace.frames)) return '';
  const lines: string[] = [];
  for (const frame of stacktrace.frames) {
    if (!isObject(frame)) continue;
    const file = text(frame.filename) ?? text(frame.abs_path) ?? text(frame.module) ?? '?';
    const line = typeof frame.lineno === 'number' && Number.isInteger(frame.lineno) ? frame.lineno : 0;
    const fn = text(frame.function) ?? '?';
    lines.push(`${file}:${line}:in '${fn}'`);
  }
  return lines.reverse().join('\n');
}

/** `timestamp` as Unix seconds (a float) or any datetime text (ISO, RFC 3339 with nanoseconds, no zone: UTC); now if unreadable or ahead. */
function occurredAt(value: unknown, now: Date): Date {
  let at: Date | undefined;
  if (typeof value === 'number' && Number.isFinite(value)) at = new Date(Math.round(value * 1000));
  else if (typeof value === 'string') at = parseDatetime(value);
  if (at === undefined || Number.isNaN(at.getTime()) || at.getTime() > now.getTime() + errorReportLimits.futureSkewMs) return now;
  return at;
}

/** A short name (host, component): trimmed, at most 255 characters; blank is none. */
function nameOf(value: unknown): string | null {
  const name = text(value)?.trim();
  return name === undefined || name === '' ? null : clean(name.slice(0, errorReportLimits.nameChars));
}

/** Tags as an object or a list of `[key, value]` pairs. */
function tagsOf(event: Json): Record<string, string> {
  const tags: Record<string, string> = {};
  const raw = event.tags;
  const pairs = Array.isArray(raw) ? raw : isObject(raw) ? Object.entries(raw) : [];
  for (const pair of pairs) {
    if (!Array.isArray(pair)) continue;
    const [key, value] = pair as unknown[];
    const keyText = text(key);
    const valueText = text(value);
    if (keyText !== undefined && valueText !== undefined && Object.keys(tags).length < 100) tags[clean(keyText.slice(0, 200))] = clean(valueText.slice(0, 200));
  }
  return tags;
}

/** At most `max` characters of a string, else nothing. */
const short = (value: unknown, max = 200): string | undefined => {
  const found = text(value);
  return found === undefined ? undefined : clean(found.slice(0, max));
};

/**
 * A request's URL as kept: its scheme, host (and port) and path only. The user and password before
 * the host, the query string and the fragment (`#access_token=...`) are dropped, as they hold
 * secrets (docs/sentry.md#what-is-recorded); a URL that does not parse is cut at its first `?` or
 * `#`, and any `user@` after its `//` dropped.
 */
export function urlOf(value: unknown): string | undefined {
  const given = text(value);
  if (given === undefined) return undefined;
  try {
    const url = new URL(given);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.href;
  } catch {
    const cut = given.replace(/[?#].*$/s, '');
    return cut.replace(/^([a-z][a-z0-9+.-]*:)?\/\/[^/]*@/i, (_whole, scheme: string | undefined) => `${scheme ?? ''}//`);
  }
}

/** What `context` keeps of the event, at most errorReportLimits.contextBytes as JSON: the least useful parts go first. */
function contextOf(event: Json, eventId: string, tags: Record<string, string>, chained: Json[]): string {
  const sdk = isObject(event.sdk) ? { name: short(event.sdk.name), version: short(event.sdk.version) } : undefined;
  const user = isObject(event.user) && text(event.user.id) !== undefined ? { id: short(event.user.id) } : undefined;
  const request = isObject(event.request) ? { url: short(urlOf(event.request.url), 2000), method: short(event.request.method, 16) } : undefined;
  const exceptions = chained.map((exception) => ({ type: short(exception.type), value: short(exception.value, 1000) }));
  const context: Json = {
    event_id: eventId,
    release: short(event.release),
    environment: short(event.environment),
    level: short(event.level, 32),
    platform: short(event.platform, 64),
    sdk,
    tags,
    user,
    request,
    exceptions: exceptions.length > 0 ? exceptions : undefined,
  };
  let serialized = JSON.stringify(context);
  for (const dropped of ['exceptions', 'tags', 'request'] as const) {
    if (Buffer.byteLength(serialized) <= errorReportLimits.contextBytes) break;
    context[dropped] = undefined;
    serialized = JSON.stringify(context);
  }
  return serialized;
}

/** `fingerprint` as the event gives it: `{{ default }}` stands for cmi's own (docs/sentry.md#grouping). */
function fingerprintOf(event: Json, ownFingerprint: string): string {
  const given = event.fingerprint;
  if (!Array.isArray(given) || given.length === 0) return ownFingerprint;
  const parts = given.map((part) => text(part) ?? '').map((part) => (part === '{{ default }}' || part === '{{default}}' ? ownFingerprint : part));
  return createHash('sha256').update(`sentry\n${parts.join('\n')}`).digest('hex');
}

const EVENT_ID = /^[0-9a-f]{32}$/;

/** The event's id as the SDK sent it (32 hex digits, dashes dropped), else a new one. */
export function eventIdOf(event: Json, fallback: () => string): string {
  const id = text(event.event_id)?.replaceAll('-', '').toLowerCase();
  return id !== undefined && EVENT_ID.test(id) ? id : fallback();
}

/**
 * An event as the tracker records it (docs/sentry.md#what-is-recorded): the primary exception
 * (the last) gives the class (module-qualified), message and frames; a message event the message;
 * `server_name` the host; the `component` tag, else the key's component, the component.
 */
export function reportOfEvent(event: Json, eventId: string, keyComponent: string | null, now: Date): ErrorReport {
  const exceptions = exceptionsOf(event);
  const primary = exceptions.at(-1);
  const type = primary === undefined ? undefined : text(primary.type);
  const module = primary === undefined ? undefined : text(primary.module);
  const rawClass = type !== undefined && type.trim() !== '' ? (module !== undefined && module !== '' ? `${module}.${type}` : type) : MESSAGE_CLASS;
  const rawMessage = (primary !== undefined ? text(primary.value) : undefined) ?? messageOf(event) ?? '';
  const stacktrace = primary?.stacktrace ?? event.stacktrace;
  const error_class = truncateErrorClass(clean(rawClass));
  const message = truncateMessage(clean(rawMessage));
  const backtrace = truncateBacktrace(clean(backtraceOf(stacktrace)));
  const tags = tagsOf(event);
  return {
    fingerprint: fingerprintOf(event, defaultFingerprint(error_class, backtrace, message)),
    error_class,
    message,
    backtrace,
    occurred_at: occurredAt(event.timestamp, now),
    count: 1,
    host: nameOf(event.server_name),
    component: nameOf(tags.component) ?? keyComponent,
    request_id: null,
    context: contextOf(event, eventId, tags, exceptions.slice(0, -1)),
    ...withFacets(facetsOf({ release: short(event.release), environment: short(event.environment), level: short(event.level, 32), tags })),
  };
}

const withFacets = (facets: ReturnType<typeof facetsOf>) => (facets ? { facets } : {});
