import { createHash } from 'node:crypto';
import type { IngestKey } from '../ingest/ingest-key.js';
import { maskMessage, truncateBacktrace, truncateErrorClass, truncateMessage } from '../tracker/grouping.js';
import type { ErrorReport } from '../tracker/infrastructure-error.js';
import { boundedText, type LogRecord, MAX_FIELD_CHARS, SEVERITY_NAMES } from './log-record.js';

/**
 * A known failure that is an error whatever its severity (docs/log-sources.md#which-lines-are-errors):
 * a record whose program matches `program` (when given) and whose message matches `pattern` is
 * recorded with `error_class`, for the component `component` names (a literal, or `$unit`: the unit
 * the pattern's `unit` group caught).
 */
export interface PromotionRule {
  name: string;
  /** A regular expression (the shipped rules) or an operator's glob (log-rule.ts globMatcher). */
  program?: { test(text: string): boolean };
  pattern: { exec(text: string): { groups?: Record<string, string> | undefined } | null };
  error_class: string;
  component?: string;
}

/** The failures every Linux machine of a cloud logs, promoted as they come (docs/log-sources.md#the-rules-shipped). */
export const DEFAULT_RULES: readonly PromotionRule[] = [
  { name: 'oom-kill', program: /^kernel$/, pattern: /\bOut of memory: Kill(?:ed)? process\b|\binvoked oom-killer\b|\boom-kill:/, error_class: 'kernel: out of memory' },
  { name: 'segfault', program: /^kernel$/, pattern: /\bsegfault at\b|\bgeneral protection(?: fault)?\b/, error_class: 'kernel: segfault' },
  { name: 'hung-task', program: /^kernel$/, pattern: /\bblocked for more than \d+ seconds\b/, error_class: 'kernel: hung task' },
  { name: 'machine-check', program: /^kernel$/, pattern: /\[Hardware Error\]|\bMachine check events logged\b|\bmce: /, error_class: 'kernel: machine check' },
  { name: 'io-error', program: /^kernel$/, pattern: /\bI\/O error\b|\bcritical medium error\b|\bblk_update_request: .*error\b/, error_class: 'kernel: I/O error' },
  { name: 'unit-failed', program: /^systemd$/, pattern: /^(?<unit>[\w@.:-]+\.(?:service|socket|mount|timer)): (?:Failed with result '[^']+'|Main process exited, code=(?:exited|killed|dumped), status=(?!0\/)|Unit entered failed state)/, error_class: 'systemd: unit failed', component: '$unit' },
];

/** How much of a message the rules are matched against (docs/log-sources.md#operator-rules). */
export const RULE_TEXT_CHARS = 4096;

/** What a record that is an error is recorded as: by a rule, or because it is severe enough. */
export interface Verdict {
  rule: PromotionRule | undefined;
  /** The component the rule gives, when it gives one. */
  component: string | undefined;
}

/**
 * Whether `record` is an error (docs/log-sources.md#which-lines-are-errors): a rule promotes it, the
 * first that matches, whatever its severity; else it is one when its severity is `minSeverity` (the
 * key's threshold, 3 err by default) or worse. Undefined: it is not, and is only counted.
 */
export function verdictOf(record: LogRecord, minSeverity: number, rules: readonly PromotionRule[] = DEFAULT_RULES): Verdict | undefined {
  // Rules read a message's first RULE_TEXT_CHARS: however a rule is written, a 64 KiB line costs it a bounded time.
  const text = record.message.length > RULE_TEXT_CHARS ? record.message.slice(0, RULE_TEXT_CHARS) : record.message;
  for (const rule of rules) {
    if (rule.program !== undefined && !rule.program.test(record.program ?? '')) continue;
    const match = rule.pattern.exec(text);
    if (match === null) continue;
    const component = rule.component === '$unit' ? match.groups?.unit : rule.component;
    return { rule, component };
  }
  return record.severity <= minSeverity ? { rule: undefined, component: undefined } : undefined;
}

const CONTEXT_RAW_BYTES = 4096;
const CONTEXT_FIELDS_BYTES = 8192;

/** The lines of its identity (docs/error-grouping.md#log-records): the class, the program, the masked message. */
function fingerprintOf(errorClass: string, program: string, message: string): string {
  return createHash('sha256').update(['log', errorClass, program, maskMessage(message)].join('\n')).digest('hex');
}

/** The time of an occurrence: the record's, unless it says none or one more than 5 minutes ahead of cmi's clock. */
function occurredAt(timestamp: Date | undefined, now: Date): Date {
  return timestamp === undefined || Number.isNaN(timestamp.getTime()) || timestamp.getTime() > now.getTime() + 5 * 60_000 ? now : timestamp;
}

const nameOf = (text: string | undefined): string | null => {
  const trimmed = text?.trim().slice(0, 255) ?? '';
  return trimmed === '' ? null : trimmed;
};

/**
 * The report a record that is an error makes (docs/error-grouping.md#log-records), field by field:
 * - `error_class`: the rule's class; else the exception's type; else the program and the severity
 *   (`libvirtd: err`);
 * - `message`: the exception's message, else the record's;
 * - `backtrace`: the exception's stack, else the line itself;
 * - the fingerprint: the class, the program and the message with its variable parts masked, so one
 *   fault logged by 500 hosts is one error;
 * - `host`: the record's, else the address it came from; `component`: the rule's, else the key's,
 *   else the program;
 * - `context`: the source, the severity, the program, the structured fields and the raw record.
 */
export function reportOfRecord(record: LogRecord, verdict: Verdict, key: Pick<IngestKey, 'id' | 'component'>, peerAddress: string | undefined, now: Date): ErrorReport {
  const program = nameOf(record.program) ?? 'unknown';
  const severity = SEVERITY_NAMES[record.severity];
  const error_class = truncateErrorClass(verdict.rule?.error_class ?? (record.exception ? record.exception.type : `${program}: ${severity}`));
  const message = truncateMessage(record.exception?.message ?? record.message);
  const backtrace = truncateBacktrace(record.exception?.stacktrace ?? record.message);
  // The context stays within the tracker's 16,384 bytes (docs/limits.md): the raw record cut to 4 KiB,
  // the fields to 8 KiB in all, in the order the record gave them.
  const fields: Record<string, string> = {};
  let room = CONTEXT_FIELDS_BYTES;
  for (const [name, value] of Object.entries(record.fields)) {
    const kept = boundedText(value, Math.min(MAX_FIELD_CHARS, room));
    room -= Buffer.byteLength(name) + Buffer.byteLength(kept) + 6;
    if (room < 0) break;
    fields[name] = kept;
  }
  return {
    fingerprint: fingerprintOf(error_class, program, message),
    error_class,
    message,
    backtrace,
    occurred_at: occurredAt(record.timestamp, now),
    count: 1,
    host: nameOf(record.host) ?? nameOf(peerAddress),
    component: nameOf(verdict.component) ?? key.component ?? program,
    request_id: null,
    context: JSON.stringify({ source: record.source, severity, program, ...(verdict.rule ? { rule: verdict.rule.name } : {}), fields, raw: boundedText(record.raw, CONTEXT_RAW_BYTES) }),
    ...(record.cursor === undefined ? {} : { event_key: `${key.id}:journal:${createHash('sha256').update(record.cursor).digest('hex').slice(0, 32)}` }),
  };
}
