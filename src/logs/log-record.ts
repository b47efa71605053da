/**
 * One record of a log the cloud already writes (docs/log-sources.md): a syslog line, a journal entry,
 * an OpenTelemetry log record or span exception, as each source's reader gives it, before cmi decides
 * whether it is an error (every source the same from here on).
 */
export interface LogRecord {
  /** The protocol it came by. */
  source: 'syslog' | 'journald' | 'otlp';
  /** The machine it names: syslog's HOSTNAME (else the sender's address, as an RFC 3164 relay does), the journal's `_HOSTNAME`, OTLP's `host.name`; undefined when it names none. */
  host: string | undefined;
  /** What wrote it: syslog's APP-NAME (or RFC 3164 TAG), the journal's `SYSLOG_IDENTIFIER` (else `_SYSTEMD_UNIT`, `_COMM`), OTLP's `service.name`. */
  program: string | undefined;
  /** Its severity on syslog's scale (RFC 5424 6.2.1): 0 emergency ... 3 error ... 7 debug (see `otlpSeverity`). */
  severity: Severity;
  /** The message: syslog's MSG, the journal's `MESSAGE`, the OTLP body (or an exception's message). Bounded (boundedText). */
  message: string;
  /** When it was written, as the record says; undefined when it says nothing usable. */
  timestamp: Date | undefined;
  /** An exception the record carries (an OTLP span event `exception`, or a log record's `exception.*` attributes). */
  exception?: { type: string; message: string; stacktrace: string | undefined };
  /**
   * Its structured fields as text: RFC 5424 structured data as `sdid.param`, the journal's fields
   * (`_SYSTEMD_UNIT`, `_PID`... never the `__` ones), OTLP resource and record attributes by key. At most
   * MAX_FIELDS, each value bounded.
   */
  fields: Record<string, string>;
  /** The record as received (a syslog line, a journal entry's export text, the OTLP record as JSON), bounded. */
  raw: string;
  /** The journal's `__CURSOR` (journald only): entries already taken are recognised by it. */
  cursor?: string;
}

/** Syslog's severities (RFC 5424 6.2.1). */
export type Severity = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7;
export const SEVERITY_NAMES = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'] as const;

/** The longest line (or message, or raw record) kept: longer ones are cut and marked (docs/limits.md#log-sources). */
export const MAX_LINE_BYTES = 64 * 1024;
export const MAX_FIELDS = 64;
export const MAX_FIELD_CHARS = 1024;

/** `text` cut to at most `maxBytes` bytes of UTF-8 (never inside a character), marked `… [truncated: N more bytes]` when cut. */
export function boundedText(text: string, maxBytes = MAX_LINE_BYTES): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return text;
  const marker = (more: number) => `… [truncated: ${more} more bytes]`;
  const room = maxBytes - Buffer.byteLength(marker(bytes));
  let cut = Buffer.from(text).subarray(0, Math.max(0, room)).toString('utf8');
  // A character cut in two decodes as U+FFFD: drop it.
  if (cut.endsWith('\uFFFD') && !text.startsWith(cut)) cut = cut.slice(0, -1);
  return cut + marker(bytes - Buffer.byteLength(cut));
}

/**
 * An OTLP severity number (1-24: TRACE, DEBUG, INFO, WARN, ERROR, FATAL, four each) on syslog's scale:
 * FATAL is crit (2), ERROR err (3), WARN warning (4), INFO info (6), DEBUG and TRACE debug (7);
 * unspecified (0) is info.
 */
export function otlpSeverity(severityNumber: number): Severity {
  if (severityNumber >= 21) return 2;
  if (severityNumber >= 17) return 3;
  if (severityNumber >= 13) return 4;
  if (severityNumber >= 9 || severityNumber <= 0) return 6;
  return 7;
}
