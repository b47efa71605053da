import { boundedText, MAX_FIELD_CHARS, MAX_FIELDS, MAX_LINE_BYTES, type LogRecord, type Severity } from './log-record.js';

/**
 * The journal export format's reader (docs/log-sources.md#the-wire): what
 * `systemd-journal-upload` sends, fed chunk by chunk as it arrives, each entry handed on as a
 * LogRecord. Every input is bounded: a field over MAX_LINE_BYTES is cut and the rest of it skipped
 * unread into memory, an entry holds at most MAX_ENTRY_FIELDS fields, and a stream that is not the
 * format stops with a JournalExportError (counted by reason).
 */

/** The most fields one entry may have; more stops the stream (systemd's own ENTRY_FIELD_COUNT_MAX). */
export const MAX_ENTRY_FIELDS = 1024;
/** The longest binary field a stream may declare (systemd's DATA_SIZE_MAX); only MAX_LINE_BYTES of it are kept. */
export const MAX_DECLARED_BYTES = 768 * 1024 * 1024;
/** The longest field name (journald's own rule: upper-case letters, digits and `_`, not starting with a digit). */
const MAX_NAME_BYTES = 64;
const NEWLINE = 0x0a;
const EQUALS = 0x3d;

/** Why a stream stopped (a JournalExportError), or why a part of it was not kept. */
export type JournalDropReason =
  /** A stream that is not the export format: stopped there (answered 400). */
  | 'malformed'
  /** An entry with more than MAX_ENTRY_FIELDS fields: the stream stopped there (400). */
  | 'too_many_fields'
  /** A stream that ended inside an entry (answered 417, as systemd-journal-remote does). */
  | 'premature_end'
  /** A `NAME=value` line whose NAME is not a valid field name: that field ignored, as journald does. */
  | 'invalid_field'
  /** Fields of an entry past MAX_FIELDS: not kept in `fields` (still in `raw` while it has room). */
  | 'fields_over_limit'
  /** A request whose body broke off before its end (the connection closed). */
  | 'aborted'
  /** A request whose key the route refused (401): its body is not read. */
  | 'unauthenticated'
  /** A request whose Content-Type is not application/vnd.fdo.journal (415). */
  | 'unsupported_media_type';

/** What the journald reader saw, for /metrics: bytes received, records handed on, fields cut, and what it dropped by reason. */
export interface JournalCounters {
  received: number;
  records: number;
  cut: number;
  dropped: Record<JournalDropReason, number>;
}

/** A fresh set of counters, every reason at 0. */
export function journalCounters(): JournalCounters {
  return {
    received: 0,
    records: 0,
    cut: 0,
    dropped: { malformed: 0, too_many_fields: 0, premature_end: 0, invalid_field: 0, fields_over_limit: 0, aborted: 0, unauthenticated: 0, unsupported_media_type: 0 },
  };
}

/** A stream that stopped: `reason` says why (counted), the message says where, in a sentence that shows none of the data. */
export class JournalExportError extends Error {
  constructor(readonly reason: 'malformed' | 'too_many_fields' | 'premature_end', message: string) {
    super(message);
    this.name = 'JournalExportError';
  }
}

export interface JournalExportParser {
  /** Reads a chunk; resolves once every entry it completed was handed on (and its sink resolved). Rejects with a JournalExportError when the stream is not the format; then reads nothing more. */
  push(chunk: Buffer): Promise<void>;
  /** The stream ended: throws a JournalExportError (premature_end) when it ended inside an entry. */
  end(): void;
  /** Bytes of the entry not yet complete (what `end` would call trailing data). */
  readonly pendingBytes: number;
}

export interface JournalExportOptions {
  /** Where to count; a fresh set when none is given. */
  counters?: JournalCounters;
}

/** Whether `name` is a journal field name (journald's journal_field_valid, protected `_` names allowed). */
function validFieldName(name: Buffer): boolean {
  if (name.length === 0 || name.length > MAX_NAME_BYTES) return false;
  if (name[0]! >= 0x30 && name[0]! <= 0x39) return false;
  for (const byte of name) {
    const upper = byte >= 0x41 && byte <= 0x5a;
    const digit = byte >= 0x30 && byte <= 0x39;
    if (!upper && !digit && byte !== 0x5f) return false;
  }
  return true;
}

/**
 * The text of a value of which `kept` are the first bytes of `totalBytes`, cut to at most `maxBytes`
 * as boundedText cuts (never inside a character, marked `… [truncated: N more bytes]` with N counted
 * on the whole value, read or skipped).
 */
export function cutText(kept: Buffer, totalBytes: number, maxBytes: number): string {
  if (totalBytes <= maxBytes && kept.length === totalBytes) return kept.toString('utf8');
  const marker = (more: number) => `… [truncated: ${more} more bytes]`;
  let end = Math.max(0, Math.min(kept.length, maxBytes - Buffer.byteLength(marker(totalBytes))));
  // Not inside a character: back to the first byte of the one the cut falls in.
  while (end > 0 && end < kept.length && (kept[end]! & 0xc0) === 0x80) end -= 1;
  return kept.subarray(0, end).toString('utf8') + marker(totalBytes - end);
}

/** U+0000 cannot be stored (docs/limits.md#nul-characters): U+FFFD in its place, as cmi's own faults are recorded. */
const withoutNul = (text: string): string => (text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text);

/** A value as one line of `raw`: control characters (a binary field's newlines, NULs) written `\n`, `\xNN`. */
function rawLine(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, (c) => (c === '\n' ? '\\n' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}

/** `__REALTIME_TIMESTAMP` (µs since the epoch, decimal) as a Date; undefined when it is not one a Date can hold. */
function realtimeOf(value: string): Date | undefined {
  if (!/^\d{1,19}$/.test(value)) return undefined;
  const ms = BigInt(value) / 1000n;
  if (ms === 0n || ms > 8_640_000_000_000_000n) return undefined;
  return new Date(Number(ms));
}

/** `PRIORITY` (0-7) as a severity; info (6) when missing or anything else. */
function severityOf(value: string | undefined): Severity {
  return value !== undefined && /^[0-7]$/.test(value) ? (Number(value) as Severity) : 6;
}

/** One entry as it is read, kept bounded: only what the record will hold. */
class EntryBuilder {
  fieldCount = 0;
  /** The entry's export bytes so far (all of them, kept or not): the entry's size in `raw`'s marker. */
  rawTotal = 0;
  private readonly raw: string[] = [];
  private rawKept = 0;
  private readonly kept = new Map<string, string>();
  private readonly fields: Record<string, string> = {};
  private fieldsKept = 0;
  message: string | undefined;

  constructor(private readonly counters: JournalCounters) {}

  add(name: string, value: Buffer, totalBytes: number): void {
    this.fieldCount += 1;
    const cut = cutText(value, totalBytes, MAX_LINE_BYTES);
    const text = withoutNul(cut);
    if (totalBytes > MAX_LINE_BYTES) this.counters.cut += 1;
    this.rawTotal += name.length + 2 + totalBytes;
    if (this.rawKept <= MAX_LINE_BYTES) {
      const line = `${name}=${rawLine(cut)}\n`;
      this.raw.push(line);
      this.rawKept += Buffer.byteLength(line);
    }
    if (name === 'MESSAGE') {
      this.message ??= text;
      return;
    }
    if (!this.kept.has(name)) this.kept.set(name, text);
    if (name.startsWith('__') || name in this.fields) return;
    if (this.fieldsKept >= MAX_FIELDS) {
      this.counters.dropped.fields_over_limit += 1;
      return;
    }
    this.fields[name] = withoutNul(cutText(value, totalBytes, MAX_FIELD_CHARS));
    this.fieldsKept += 1;
  }

  record(): LogRecord {
    const get = (name: string) => this.kept.get(name);
    const rawText = this.raw.join('');
    const realtime = get('__REALTIME_TIMESTAMP');
    const record: LogRecord = {
      source: 'journald',
      host: get('_HOSTNAME'),
      program: get('SYSLOG_IDENTIFIER') ?? get('_SYSTEMD_UNIT') ?? get('_COMM'),
      severity: severityOf(get('PRIORITY')),
      message: boundedText(this.message ?? ''),
      timestamp: realtime === undefined ? undefined : realtimeOf(realtime),
      fields: this.fields,
      raw: this.rawKept > MAX_LINE_BYTES ? cutText(Buffer.from(rawText), Math.max(this.rawTotal, Buffer.byteLength(rawText)), MAX_LINE_BYTES) : rawText,
    };
    const cursor = get('__CURSOR');
    if (cursor !== undefined) record.cursor = boundedText(cursor, MAX_FIELD_CHARS);
    return record;
  }
}

type State = 'line' | 'size' | 'data' | 'data-newline' | 'stopped';

/**
 * A streaming reader of the journal export format (https://systemd.io/JOURNAL_EXPORT_FORMATS/,
 * docs/log-sources.md#the-wire): `NAME=value\n` fields, binary ones as `NAME\n`, a
 * little-endian 64-bit length, the bytes and `\n`; an empty line ends an entry, which goes to
 * `onEntry` as a LogRecord (awaited before reading on). Maps `MESSAGE` to the message (a binary one
 * decoded as UTF-8), `PRIORITY` to the severity (6 without one), `_HOSTNAME` to the host,
 * `SYSLOG_IDENTIFIER` (else `_SYSTEMD_UNIT`, else `_COMM`) to the program, `__REALTIME_TIMESTAMP` to
 * the timestamp and `__CURSOR` to the cursor; other fields but the `__` ones go to `fields`.
 */
export function journalExportParser(onEntry: (record: LogRecord) => void | Promise<void>, options: JournalExportOptions = {}): JournalExportParser {
  const counters = options.counters ?? journalCounters();
  let state: State = 'line';
  let entry = new EntryBuilder(counters);
  /** The field (or line) being read: its first bytes, and how many it has in all. */
  let kept: Buffer[] = [];
  let keptBytes = 0;
  let totalBytes = 0;
  let binaryName = '';
  let sizeBytes = Buffer.alloc(0);
  let remaining = 0;
  /** Bytes of the entry not yet complete, and of the stream so far (where a mistake is). */
  let pending = 0;
  let offset = 0;

  const take = (bytes: Buffer, limit: number) => {
    totalBytes += bytes.length;
    if (keptBytes >= limit) return;
    const part = bytes.length > limit - keptBytes ? bytes.subarray(0, limit - keptBytes) : bytes;
    // A copy: the caller's chunk is not held past this call.
    kept.push(Buffer.from(part));
    keptBytes += part.length;
  };
  const takeAll = (): { value: Buffer; total: number } => {
    const value = kept.length === 1 ? kept[0]! : Buffer.concat(kept);
    const total = totalBytes;
    kept = [];
    keptBytes = 0;
    totalBytes = 0;
    return { value, total };
  };

  const stop = (reason: JournalExportError['reason'], message: string): never => {
    state = 'stopped';
    counters.dropped[reason] += 1;
    throw new JournalExportError(reason, message);
  };

  const field = (name: string, value: Buffer, total: number) => {
    entry.add(name, value, total);
    if (entry.fieldCount > MAX_ENTRY_FIELDS) stop('too_many_fields', `An entry has more than ${MAX_ENTRY_FIELDS} fields (byte ${offset}).`);
  };

  const endOfEntry = async () => {
    const done = entry;
    entry = new EntryBuilder(counters);
    pending = 0;
    if (done.fieldCount === 0) return;
    counters.records += 1;
    await onEntry(done.record());
  };

  const line = async () => {
    const { value, total } = takeAll();
    if (total === 0) return endOfEntry();
    const equals = value.indexOf(EQUALS);
    if (equals < 0) {
      if (total > value.length || total > MAX_NAME_BYTES || !validFieldName(value)) {
        stop('malformed', `The line ending at byte ${offset} is neither a NAME=value field nor the name of a binary field.`);
      }
      binaryName = value.toString('latin1');
      state = 'size';
      return;
    }
    const name = value.subarray(0, equals);
    if (!validFieldName(name)) {
      counters.dropped.invalid_field += 1;
      return;
    }
    field(name.toString('latin1'), value.subarray(equals + 1), total - equals - 1);
  };

  /** The binary field's length is read: its bytes next (at most MAX_DECLARED_BYTES). */
  const declared = () => {
    const length = sizeBytes.readBigUInt64LE(0);
    sizeBytes = Buffer.alloc(0);
    if (length > BigInt(MAX_DECLARED_BYTES)) {
      stop('malformed', `The binary field ${binaryName} declares ${length} bytes, more than the ${MAX_DECLARED_BYTES} a field may have.`);
    }
    remaining = Number(length);
    state = remaining > 0 ? 'data' : 'data-newline';
  };

  const stopped = () => state === 'stopped';

  const push = async (chunk: Buffer): Promise<void> => {
    if (stopped()) return;
    counters.received += chunk.length;
    let at = 0;
    /** Moves on `n` bytes of the chunk (of the entry not yet complete). */
    const consume = (n: number) => {
      at += n;
      offset += n;
      pending += n;
    };
    while (at < chunk.length && !stopped()) {
      if (state === 'line') {
        const newline = chunk.indexOf(NEWLINE, at);
        const end = newline < 0 ? chunk.length : newline;
        // The name and `=` besides MAX_LINE_BYTES of value; the rest counted, not kept.
        take(chunk.subarray(at, end), MAX_LINE_BYTES + MAX_NAME_BYTES + 1);
        consume(end - at + (newline < 0 ? 0 : 1));
        if (newline >= 0) await line();
      } else if (state === 'size') {
        const n = Math.min(8 - sizeBytes.length, chunk.length - at);
        sizeBytes = Buffer.concat([sizeBytes, chunk.subarray(at, at + n)]);
        consume(n);
        if (sizeBytes.length === 8) declared();
      } else if (state === 'data') {
        const n = Math.min(remaining, chunk.length - at);
        take(chunk.subarray(at, at + n), MAX_LINE_BYTES);
        remaining -= n;
        consume(n);
        if (remaining === 0) state = 'data-newline';
      } else {
        if (chunk[at] !== NEWLINE) stop('malformed', `The binary field ${binaryName} is not followed by a newline (byte ${offset}).`);
        consume(1);
        const { value, total } = takeAll();
        state = 'line';
        field(binaryName, value, total);
      }
    }
  };

  const end = (): void => {
    if (stopped()) return;
    if (pending > 0) stop('premature_end', `Premature EOF. ${pending} bytes of trailing data not processed.`);
  };

  return {
    push,
    end,
    get pendingBytes() {
      return pending;
    },
  };
}
