/**
 * Reads one syslog line into a LogRecord (docs/log-sources.md#what-a-line-becomes): the RFC 5424
 * form, and the older RFC 3164 form as the senders really write it (with or without a HOSTNAME, with a
 * BSD or an RFC 3339 timestamp). Framing (octet counting, LF) is the listener's (syslog-listener.ts):
 * this module sees one frame's text.
 */
import { boundedText, MAX_FIELD_CHARS, MAX_FIELDS, MAX_LINE_BYTES, type LogRecord, type Severity } from './log-record.js';

/** Facilities by code (RFC 5424 6.2.1, with the names rsyslog and logger use). */
export const FACILITY_NAMES = [
  'kern', 'user', 'mail', 'daemon', 'auth', 'syslog', 'lpr', 'news', 'uucp', 'cron', 'authpriv', 'ftp',
  'ntp', 'security', 'console', 'solaris-cron', 'local0', 'local1', 'local2', 'local3', 'local4', 'local5',
  'local6', 'local7',
] as const;

/** `<PRIVAL>`: 1 to 3 digits, 0 to 191 (RFC 5424 6.2.1). */
const PRI = /^<(\d{1,3})>/;
/** RFC 5424's HEADER after PRI: VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID, then SP or the end. */
const HEADER_5424 = /^1 (\S+) (\S{1,255}) (\S{1,48}) (\S{1,128}) (\S{1,32})(?: |$)/;
/** TIMESTAMP (RFC 5424 6.2.3, RFC 3339 with a `T`, upper case; the calendar is checked apart). */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;
/** RFC 3164's TIMESTAMP: `Mmm dd hh:mm:ss`, the day padded with a space, then SP. */
const BSD_TIMESTAMP = /^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) /;
/** What senders put in RFC 3164's place instead (rsyslog's RSYSLOG_ForwardFormat): an RFC 3339 timestamp, then SP. */
const ISO_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) /;
/** RFC 3164's TAG: up to 48 characters (no space, `[` or `:`), an optional `[PID]`, then `:` and SP (or the end). */
const TAG = /^([^\s[\]:]{1,48})(?:\[([^\]\s]{1,128})\])?:(?: |$)/;
/** After a HOSTNAME, `name[pid]` without the `:` is a TAG too: rsyslog's RSYSLOG_ForwardFormat writes a line it took as RFC 5424 so. */
const TAG_AFTER_HOST = /^([^\s[\]:]{1,48})(?:\[([^\]\s]{1,128})\]:?|:)(?: |$)/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const NIL = '-';
const BOM = '\uFEFF';
/** SD-NAME (RFC 5424 6.3.3): 1 to 32 of PRINTUSASCII but `=`, SP, `]` and `"`. */
const SD_NAME = /^[!#-<>-\\^-~]{1,32}/;

/**
 * One syslog frame's text as a LogRecord; undefined when it is no syslog line (no valid PRI, neither
 * form's header, malformed structured data), which the caller counts. `receivedFrom` (the sender's
 * address) is the host when the line names none, as an RFC 3164 relay would write it (RFC 3164 4.3.2).
 * `now` places an RFC 3164 timestamp, which has no year, in the year that puts it nearest to now; it is
 * read as UTC (it carries no zone); given as a clock, it is read only for such a line.
 */
export function parseSyslog(line: string, receivedFrom: string, now: Date | (() => Date) = () => new Date()): LogRecord | undefined {
  const pri = PRI.exec(line);
  if (!pri) return undefined;
  const prival = Number(pri[1]);
  if (prival > 191) return undefined;
  const severity = (prival & 7) as Severity;
  const facility = FACILITY_NAMES[prival >> 3] as string;
  const text = withoutLineEnd(line);
  const rest = text.slice(pri[0].length);
  const parsed = parse5424(rest) ?? parse3164(rest, now);
  if (!parsed) return undefined;
  const fields: Record<string, string> = { 'syslog.facility': facility };
  if (parsed.procid !== undefined) fields['syslog.procid'] = boundedField(parsed.procid);
  if (parsed.msgid !== undefined) fields['syslog.msgid'] = boundedField(parsed.msgid);
  for (const [name, value] of parsed.params) addField(fields, name, value);
  return {
    source: 'syslog',
    host: parsed.host ?? (receivedFrom === '' ? undefined : receivedFrom),
    program: parsed.program,
    severity,
    message: bounded(cleaned(parsed.message)),
    timestamp: parsed.timestamp,
    fields,
    raw: bounded(cleaned(text)),
  };
}

interface Parsed {
  host: string | undefined;
  program: string | undefined;
  timestamp: Date | undefined;
  procid: string | undefined;
  msgid: string | undefined;
  /** Structured data as `[sdid.param, value]`, in order. */
  params: Array<[string, string]>;
  message: string;
}

/** RFC 5424 after PRI: undefined when it is not that form, or its structured data is malformed. */
function parse5424(rest: string): Parsed | undefined {
  const header = HEADER_5424.exec(rest);
  if (!header) return undefined;
  const [, timestamp, host, program, procid, msgid] = header as unknown as [string, string, string, string, string, string];
  const data = structuredData(rest, header[0].length);
  if (!data) return undefined;
  let message = rest.slice(data.end);
  if (message.startsWith(' ')) message = message.slice(1);
  else if (message !== '') return undefined;
  if (message.startsWith(BOM)) message = message.slice(1);
  return {
    host: nil(host),
    program: nil(program),
    timestamp: timestamp === NIL ? undefined : rfc3339(timestamp),
    procid: nil(procid),
    msgid: nil(msgid),
    params: data.params,
    message,
  };
}

/**
 * STRUCTURED-DATA from `start` (RFC 5424 6.3): NILVALUE or SD-ELEMENTs, `[SD-ID *(SP PARAM-NAME="VALUE")]`,
 * `\"`, `\\` and `\]` in a value standing for the character (any other backslash stays, as 6.3.3 says).
 * Where it ends, or undefined when malformed.
 */
function structuredData(text: string, start: number): { params: Array<[string, string]>; end: number } | undefined {
  if (text.startsWith(NIL, start) && (text.length === start + 1 || text[start + 1] === ' ')) return { params: [], end: start + 1 };
  const params: Array<[string, string]> = [];
  let at = start;
  if (text[at] !== '[') return undefined;
  while (text[at] === '[') {
    const id = SD_NAME.exec(text.slice(at + 1, at + 33));
    if (!id) return undefined;
    at += 1 + id[0].length;
    while (text[at] === ' ') {
      const name = SD_NAME.exec(text.slice(at + 1, at + 33));
      if (!name) return undefined;
      at += 1 + name[0].length;
      if (text[at] !== '=' || text[at + 1] !== '"') return undefined;
      const value = paramValue(text, at + 2);
      if (!value) return undefined;
      params.push([`${id[0]}.${name[0]}`, value.value]);
      at = value.end;
    }
    if (text[at] !== ']') return undefined;
    at += 1;
  }
  return { params, end: at };
}

/** A PARAM-VALUE from `start` (just after its opening `"`) to its closing `"`, unescaped; undefined when it never closes. */
function paramValue(text: string, start: number): { value: string; end: number } | undefined {
  let value = '';
  let from = start;
  for (let at = start; at < text.length; at += 1) {
    const char = text[at];
    if (char === '\\' && at + 1 < text.length) {
      const next = text[at + 1];
      if (next === '"' || next === '\\' || next === ']') {
        value += text.slice(from, at) + next;
        at += 1;
        from = at + 1;
      }
    } else if (char === '"') {
      return { value: value + text.slice(from, at), end: at + 1 };
    }
  }
  return undefined;
}

/**
 * RFC 3164 after PRI, as senders write it: [TIMESTAMP SP [HOSTNAME SP]] TAG[PID]: MSG, the timestamp BSD's
 * or RFC 3339's. Without a timestamp the TAG form is required (else it is no syslog line). A first word
 * that is a TAG (`name:` or `name[pid]:`) means there is no HOSTNAME; after a HOSTNAME, `name[pid]`
 * without its `:` is a TAG too; without a TAG the program is unknown and the words after HOSTNAME are
 * the message.
 */
function parse3164(rest: string, now: Date | (() => Date)): Parsed | undefined {
  const bsd = BSD_TIMESTAMP.exec(rest);
  const iso = bsd ? undefined : ISO_TIMESTAMP.exec(rest);
  const stamp = bsd ?? iso;
  let at = stamp ? stamp[0].length : 0;
  const timestamp = bsd ? bsdDate(bsd, typeof now === 'function' ? now() : now) : iso ? rfc3339(iso[1] as string) : undefined;
  let host: string | undefined;
  let tag = TAG.exec(rest.slice(at, at + 200));
  if (!tag) {
    if (!stamp) return undefined;
    const word = /^(\S{1,255})(?: |$)/.exec(rest.slice(at, at + 257));
    if (word) {
      host = word[1];
      at += word[0].length;
      tag = TAG_AFTER_HOST.exec(rest.slice(at, at + 200));
    }
  }
  if (tag) at += tag[0].length;
  return {
    host,
    program: tag?.[1],
    timestamp,
    procid: tag?.[2],
    msgid: undefined,
    params: [],
    message: rest.slice(at),
  };
}

/** A BSD timestamp in the year (last, this or next) that puts it nearest to `now`, read as UTC; undefined for a day that does not exist. */
function bsdDate(match: RegExpExecArray, now: Date): Date | undefined {
  const text = match[0];
  const nowMs = now.getTime();
  // Lines come in runs of one second: the last answer is kept while "now" stays within the hour.
  if (text === bsdCache.text && Math.abs(nowMs - bsdCache.nowMs) < 3_600_000) return bsdCache.ms === undefined ? undefined : new Date(bsdCache.ms);
  const month = MONTHS.indexOf(match[1] as string);
  const day = Number(match[2]);
  const [hour, minute, second] = [Number(match[3]), Number(match[4]), Number(match[5])];
  let best: number | undefined;
  if (day >= 1 && hour <= 23 && minute <= 59 && second <= 59) {
    const thisYear = now.getUTCFullYear();
    for (const year of [thisYear - 1, thisYear, thisYear + 1]) {
      if (day > daysInMonth(year, month)) continue;
      const ms = Date.UTC(year, month, day, hour, minute, second);
      if (best === undefined || Math.abs(ms - nowMs) < Math.abs(best - nowMs)) best = ms;
    }
  }
  bsdCache = { text, nowMs, ms: best };
  return best === undefined ? undefined : new Date(best);
}
let bsdCache: { text: string; nowMs: number; ms: number | undefined } = { text: '', nowMs: 0, ms: undefined };

/** An RFC 3339 timestamp as RFC 5424 6.2.3 writes it; undefined when malformed or not a real date and time. */
function rfc3339(text: string): Date | undefined {
  // A sender's lines share their timestamps: the last one read is kept (a Date each, a caller may change it).
  if (text === rfc3339Cache.text) return rfc3339Cache.ms === undefined ? undefined : new Date(rfc3339Cache.ms);
  const date = readRfc3339(text);
  rfc3339Cache = { text, ms: date?.getTime() };
  return date;
}
let rfc3339Cache: { text: string; ms: number | undefined } = { text: '', ms: undefined };

function readRfc3339(text: string): Date | undefined {
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const hour = Number(match[4]);
  const minute = Number(match[5]);
  const second = Number(match[6]);
  const fraction = match[7];
  const zone = match[8] as string;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month - 1) || hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const hours = Number(zone.slice(1, 3));
    const minutes = Number(zone.slice(4, 6));
    if (hours > 23 || minutes > 59) return undefined;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
  }
  // Milliseconds: the fraction's first three digits (RFC 5424 allows six; a Date keeps three).
  const millis = fraction === undefined ? 0 : Number(fraction.length >= 3 ? fraction.slice(0, 3) : fraction.padEnd(3, '0'));
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000);
}

/** Days in `month` (0-11) of `year`, leap years by the Gregorian rule. */
function daysInMonth(year: number, month: number): number {
  if (month === 1) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 3 || month === 5 || month === 8 || month === 10 ? 30 : 31;
}

/** A field by name, unless MAX_FIELDS are taken; a name given twice (allowed within one SD-ELEMENT) keeps its values joined by `, `. */
function addField(fields: Record<string, string>, name: string, value: string): void {
  const key = cleaned(name);
  const earlier = fields[key];
  if (earlier !== undefined) fields[key] = boundedField(`${earlier}, ${value}`);
  else if (Object.keys(fields).length < MAX_FIELDS) fields[key] = boundedField(value);
}

const nil = (value: string): string | undefined => (value === NIL ? undefined : value);
/** The frame without the LF (or CRLF) that ends it: rsyslog's RFC 5424 template ends its lines with one even when octet-counted. */
function withoutLineEnd(line: string): string {
  let end = line.length;
  while (end > 0 && (line.charCodeAt(end - 1) === 0x0a || line.charCodeAt(end - 1) === 0x0d)) end -= 1;
  return end === line.length ? line : line.slice(0, end);
}
/** NUL stands for nothing a database keeps (PostgreSQL's text refuses it): U+FFFD in its place. */
const cleaned = (text: string): string => (text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text);
/** boundedText, without measuring UTF-8 for text too short to pass the bound (at most 3 bytes a UTF-16 unit). */
const bounded = (text: string): string => (text.length * 3 <= MAX_LINE_BYTES ? text : boundedText(text));
const boundedField = (text: string): string => cleaned(text.length * 3 <= MAX_FIELD_CHARS ? text : boundedText(text, MAX_FIELD_CHARS));
