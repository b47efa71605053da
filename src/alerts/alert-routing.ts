import { FieldErrors } from '../shared/problems.js';
import { refusedPort } from './sender.js';
import { flagOf, idListField, stringField, stringList, unwrapRecord } from '../shared/request-body.js';

/** Where alerts go (docs/alert-routing.md#destinations). */
export type DestinationKind = 'webhook' | 'slack' | 'email';
export type SmtpSecurity = 'none' | 'starttls' | 'tls';
/** The events a rule may route. */
export type RoutedEvent = 'new' | 'regression' | 'spike' | 'report' | 'silent' | 'back';

export const DESTINATION_KINDS: readonly DestinationKind[] = ['webhook', 'slack', 'email'];
export const SMTP_SECURITY: readonly SmtpSecurity[] = ['none', 'starttls', 'tls'];
export const ROUTED_EVENTS: readonly RoutedEvent[] = ['new', 'regression', 'spike', 'report', 'silent', 'back'];
/** The longest silence a rule may wait for: a week, in minutes (docs/alert-routing.md#silent-sources). */
export const MAX_SILENT_MINUTES = 10_080;

/** A destination as cmi keeps it, secrets included: never served as it is (see `servedDestination`). */
export interface AlertDestination {
  id: number;
  label: string;
  kind: DestinationKind;
  url: string | null;
  secret: string | null;
  smtp_host: string | null;
  smtp_port: number | null;
  smtp_security: SmtpSecurity | null;
  smtp_user: string | null;
  smtp_password: string | null;
  from: string | null;
  to: string[];
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export type DestinationFields = Omit<AlertDestination, 'id' | 'created_at' | 'updated_at'>;

/** A destination as the API serves it: no secret, no password, a URL with its origin only. */
export interface ServedDestination {
  id: number;
  label: string;
  kind: DestinationKind;
  url: string | null;
  secret: null;
  smtp_host: string | null;
  smtp_port: number | null;
  smtp_security: SmtpSecurity | null;
  smtp_user: string | null;
  smtp_password: null;
  from: string | null;
  /** JSON text of the list of addresses. */
  to: string;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface AlertRule {
  id: number;
  label: string;
  events: RoutedEvent[];
  component: string | null;
  host: string | null;
  error_class: string | null;
  error_class_prefix: string | null;
  spike_threshold: number | null;
  spike_window: number | null;
  cooldown: number | null;
  /** A source in the rule's scope silent this many minutes raises `silent`, then `back` (docs/alert-routing.md#silent-sources); null: none. */
  silent_minutes: number | null;
  destination_ids: number[];
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export type RuleFields = Omit<AlertRule, 'id' | 'created_at' | 'updated_at'>;

/** A rule as the API serves it: its lists as JSON text (arrays in JSON, their text in XML). */
export type ServedRule = Omit<AlertRule, 'events' | 'destination_ids'> & { events: string; destination_ids: string };

export const servedRule = (rule: AlertRule): ServedRule => ({ ...rule, events: JSON.stringify(rule.events), destination_ids: JSON.stringify(rule.destination_ids) });

/** A URL as served and logged: its origin only (its path, query or credentials may be a secret: docs/security.md). */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}/…`;
  } catch {
    return '(invalid URL)';
  }
}

export const servedDestination = (destination: AlertDestination): ServedDestination => ({
  ...destination,
  url: destination.url === null ? null : shownUrl(destination.url),
  secret: null,
  smtp_password: null,
  to: JSON.stringify(destination.to),
});

const MAX_URL_CHARS = 2048;
const MIN_SECRET_CHARS = 16;
const MAX_RECIPIENTS = 50;
/** The list as stored, its addresses joined by commas (`to_addresses`, migration 025). */
const MAX_RECIPIENTS_CHARS = 4096;
const ADDRESS = /^[^\s@<>",;:()[\]\\]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;
const HOST = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$|^\[[0-9A-Fa-f:.]+\]$/;

/** An integer field within [min, max]; null clears it when `nullable`. */
function integerField(fields: Record<string, unknown>, name: string, errors: FieldErrors, min: number, max: number): number | null | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d{1,10}\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(number) || number < min || number > max) {
    errors.add(name, `must be an integer from ${min} to ${max}`);
    return undefined;
  }
  return number;
}

/** An optional text field that an empty string or null clears. */
function optionalText(fields: Record<string, unknown>, name: string, errors: FieldErrors, max = 255): string | null | undefined {
  if (fields[name] === null) return null;
  const value = stringField(fields, name, errors, { required: false, max });
  if (value === undefined) return undefined;
  return value.trim() === '' ? null : value.trim();
}

/**
 * The fields of a destination's create or edit body (wrapped in `alert_destination` or not), every
 * bad one named in one 422. `current` is the destination edited: what the body leaves out is kept,
 * and the whole must still make a destination of its kind.
 */
export function readDestination(body: unknown, current: DestinationFields | undefined): DestinationFields {
  const fields = unwrapRecord(body ?? {}, 'alert_destination');
  const errors = new FieldErrors();
  const out: DestinationFields = current ? { ...current, to: [...current.to] } : {
    label: '', kind: 'webhook', url: null, secret: null, smtp_host: null, smtp_port: null, smtp_security: null,
    smtp_user: null, smtp_password: null, from: null, to: [], enabled: true,
  };
  const label = stringField(fields, 'label', errors, { required: current === undefined, max: 255 });
  if (label !== undefined) {
    if (label.trim() === '') errors.add('label', "can't be blank");
    else out.label = label.trim();
  }
  if (fields['kind'] !== undefined || current === undefined) {
    if (typeof fields['kind'] !== 'string' || !DESTINATION_KINDS.includes(fields['kind'] as DestinationKind)) errors.add('kind', `must be one of ${DESTINATION_KINDS.join(', ')}`);
    else out.kind = fields['kind'] as DestinationKind;
  }
  const url = optionalText(fields, 'url', errors, MAX_URL_CHARS);
  // The URL as served (its origin and "…") sent back unchanged keeps the one stored.
  if (url !== undefined && !(url !== null && current?.url && url === shownUrl(current.url))) {
    if (url === null) out.url = null;
    else {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        parsed = undefined;
      }
      const port = parsed ? refusedPort(parsed) : undefined;
      if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '' || url.includes('…')) errors.add('url', 'must be an http or https URL');
      else if (port !== undefined) errors.add('url', `names port ${port}, which webhooks are never sent to (a port fetch refuses)`);
      else out.url = url;
    }
  }
  if (fields['secret'] !== undefined) {
    const secret = optionalText(fields, 'secret', errors);
    if (secret !== undefined) {
      if (secret !== null && secret.length < MIN_SECRET_CHARS) errors.add('secret', `is too short (minimum is ${MIN_SECRET_CHARS} characters)`);
      else out.secret = secret;
    }
  }
  const host = optionalText(fields, 'smtp_host', errors);
  if (host !== undefined) {
    if (host !== null && !HOST.test(host)) errors.add('smtp_host', 'must be a host name or address');
    else out.smtp_host = host;
  }
  const port = integerField(fields, 'smtp_port', errors, 1, 65535);
  if (port !== undefined) out.smtp_port = port;
  if (fields['smtp_security'] !== undefined && fields['smtp_security'] !== null) {
    if (!SMTP_SECURITY.includes(fields['smtp_security'] as SmtpSecurity)) errors.add('smtp_security', `must be one of ${SMTP_SECURITY.join(', ')}`);
    else out.smtp_security = fields['smtp_security'] as SmtpSecurity;
  }
  const user = optionalText(fields, 'smtp_user', errors);
  if (user !== undefined) out.smtp_user = user;
  const password = optionalText(fields, 'smtp_password', errors);
  if (password !== undefined) out.smtp_password = password;
  const from = optionalText(fields, 'from', errors, 320);
  if (from !== undefined) {
    if (from !== null && !ADDRESS.test(from)) errors.add('from', 'must be a mail address such as cmi@example.com');
    else out.from = from;
  }
  if (fields['to'] !== undefined && fields['to'] !== null) {
    const list = stringList(fields['to']);
    if (list === undefined || !list.every((item) => typeof item === 'string' && ADDRESS.test(item))) errors.add('to', 'must be a list of mail addresses such as storage@example.com');
    else if (list.length > MAX_RECIPIENTS) errors.add('to', `must hold at most ${MAX_RECIPIENTS} addresses`);
    else if ([...new Set(list as string[])].join(',').length > MAX_RECIPIENTS_CHARS) errors.add('to', `is too long (maximum is ${MAX_RECIPIENTS_CHARS} characters in all)`);
    else out.to = [...new Set(list as string[])];
  }
  if (fields['enabled'] !== undefined && fields['enabled'] !== null) {
    const enabled = flagOf(fields['enabled']);
    if (enabled === undefined) errors.add('enabled', 'must be true or false');
    else out.enabled = enabled;
  }
  errors.throwIfAny();
  // What its kind needs.
  if (out.kind === 'webhook' || out.kind === 'slack') {
    if (out.url === null) errors.add('url', `can't be blank for a ${out.kind} destination`);
    if (out.kind === 'webhook' && out.secret === null) errors.add('secret', `can't be blank for a webhook destination: its signing key, at least ${MIN_SECRET_CHARS} characters (cmi alerts destinations add and edit read it from CMI_DESTINATION_SECRET)`);
  } else {
    if (out.smtp_host === null) errors.add('smtp_host', "can't be blank for an email destination");
    if (out.from === null) errors.add('from', "can't be blank for an email destination");
    if (out.to.length === 0) errors.add('to', "can't be empty for an email destination");
    out.smtp_security ??= 'starttls';
    out.smtp_port ??= out.smtp_security === 'tls' ? 465 : out.smtp_security === 'starttls' ? 587 : 25;
  }
  // A kept password would go to the new server, or in the clear: whoever points it elsewhere must know
  // it, whatever the kind meanwhile (docs/alert-routing.md#destinations).
  const moved = current !== undefined && (out.smtp_host !== current.smtp_host || out.smtp_port !== current.smtp_port || out.smtp_security !== current.smtp_security);
  if (moved && current.smtp_password !== null && fields['smtp_password'] === undefined) {
    errors.add('smtp_password', 'must be given again when smtp_host, smtp_port or smtp_security changes');
  }
  errors.throwIfAny();
  return out;
}

/** The fields of a rule's create or edit body (wrapped in `alert_rule` or not); `current` as for destinations. */
export function readRule(body: unknown, current: RuleFields | undefined): RuleFields {
  const fields = unwrapRecord(body ?? {}, 'alert_rule');
  const errors = new FieldErrors();
  const out: RuleFields = current ? { ...current } : {
    label: '', events: [], component: null, host: null, error_class: null, error_class_prefix: null,
    spike_threshold: null, spike_window: null, cooldown: null, silent_minutes: null, destination_ids: [], enabled: true,
  };
  const label = stringField(fields, 'label', errors, { required: current === undefined, max: 255 });
  if (label !== undefined) {
    if (label.trim() === '') errors.add('label', "can't be blank");
    else out.label = label.trim();
  }
  if (fields['events'] !== undefined || current === undefined) {
    const list = fields['events'] === undefined || fields['events'] === null ? [] : stringList(fields['events']);
    if (list === undefined || !list.every((item) => ROUTED_EVENTS.includes(item as RoutedEvent))) errors.add('events', `must be a list of events: ${ROUTED_EVENTS.join(', ')}`);
    else if (list.length === 0) errors.add('events', "can't be empty");
    else out.events = ROUTED_EVENTS.filter((event) => list.includes(event));
  }
  for (const name of ['component', 'host', 'error_class', 'error_class_prefix'] as const) {
    const value = optionalText(fields, name, errors);
    if (value !== undefined) out[name] = value;
  }
  const threshold = integerField(fields, 'spike_threshold', errors, 1, 1_000_000_000);
  if (threshold !== undefined) out.spike_threshold = threshold;
  const window = integerField(fields, 'spike_window', errors, 1, 86_400);
  if (window !== undefined) out.spike_window = window;
  const cooldown = integerField(fields, 'cooldown', errors, 0, 30 * 86_400);
  if (cooldown !== undefined) out.cooldown = cooldown;
  const silentMinutes = integerField(fields, 'silent_minutes', errors, 1, MAX_SILENT_MINUTES);
  if (silentMinutes !== undefined) out.silent_minutes = silentMinutes;
  if (fields['destination_ids'] !== undefined || current === undefined) {
    const ids = idListField(fields, 'destination_ids', errors);
    if (ids !== undefined) out.destination_ids = [...new Set(ids)].sort((a, b) => a - b);
    if (!errors.has('destination_ids') && out.destination_ids.length === 0) errors.add('destination_ids', "can't be empty: a rule sends to at least one destination");
    else if (out.destination_ids.length > 100) errors.add('destination_ids', 'must hold at most 100 destinations');
  }
  if (fields['enabled'] !== undefined && fields['enabled'] !== null) {
    const enabled = flagOf(fields['enabled']);
    if (enabled === undefined) errors.add('enabled', 'must be true or false');
    else out.enabled = enabled;
  }
  errors.throwIfAny();
  // Silence is of sources, which have no error class: such a rule is scoped by component and host only.
  const silence = out.events.includes('silent') || out.events.includes('back');
  if (silence && out.silent_minutes === null) errors.add('silent_minutes', "can't be blank for a rule routing silent or back: the minutes a source may send nothing");
  else if (!silence && out.silent_minutes !== null) errors.add('events', 'must hold silent (or back) when silent_minutes is given');
  errors.throwIfAny();
  return out;
}

/** What a rule is matched against: an error and the hosts and components its reports named. */
export interface RoutedError {
  error_class: string;
  hosts: readonly string[];
  components: readonly string[];
}

/** Every condition the rule gives must hold (docs/alert-routing.md#rules). */
export function ruleMatches(rule: Pick<AlertRule, 'component' | 'host' | 'error_class' | 'error_class_prefix'>, error: RoutedError): boolean {
  return (rule.component === null || error.components.includes(rule.component))
    && (rule.host === null || error.hosts.includes(rule.host))
    && (rule.error_class === null || error.error_class === rule.error_class)
    && (rule.error_class_prefix === null || error.error_class.startsWith(rule.error_class_prefix));
}
