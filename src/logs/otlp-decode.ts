import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { boundedText, type LogRecord, MAX_FIELD_CHARS, MAX_FIELDS, otlpSeverity, type Severity } from './log-record.js';

/**
 * The OpenTelemetry reader's decoding (docs/log-sources.md#opentelemetry-otlphttp): an
 * `ExportLogsServiceRequest` or `ExportTraceServiceRequest`, as protobuf or as OTLP JSON, perhaps
 * gzip-compressed, turned into LogRecords. Protobuf is read by a small reader of its own (wire format:
 * varint, 64-bit, length-delimited, 32-bit; unknown fields skipped), for exactly the fields cmi uses,
 * with the field numbers of opentelemetry-proto (logs/v1/logs.proto, trace/v1/trace.proto,
 * common/v1/common.proto, resource/v1/resource.proto).
 *
 * A body whose outer structure cannot be read throws OtlpUndecodable (answered 400). A single log
 * record or span that cannot be read is counted as rejected (answered in `partial_success`) and the
 * others are kept.
 */

/** What a request can carry: log records (`/v1/logs`) or spans (`/v1/traces`). */
export type OtlpSignal = 'logs' | 'traces';
/** How the body is encoded: `application/x-protobuf` or `application/json`. */
export type OtlpEncoding = 'protobuf' | 'json';

/** The limits of one request (docs/log-sources.md#opentelemetry-otlphttp). */
export const OTLP_LIMITS = {
  /** The body as sent (compressed or not). */
  bodyBytes: 4 * 1024 * 1024,
  /** The body once decompressed. */
  decodedBytes: 16 * 1024 * 1024,
  /** Log records or spans read from one request; the rest are rejected. */
  items: 10_000,
  /** How deep an AnyValue (arrays, key-value lists) may nest. */
  valueDepth: 16,
} as const;

/** A body that cannot be decoded at all: answered 400 with this message (it never quotes the body). */
export class OtlpUndecodable extends Error {}

/** A body larger than OTLP_LIMITS allows, as sent or once decompressed: answered 413. */
export class OtlpTooLarge extends Error {}

/** A Content-Encoding other than gzip, deflate or identity: answered 415. */
export class OtlpUnsupportedEncoding extends Error {}

/** Why a log record or a span was rejected. */
export type OtlpRejection = 'unreadable_record' | 'too_many_records';

/** What one request gave. */
export interface OtlpDecoded {
  /** Every record read: all log records whatever their severity, one per span event `exception`. */
  records: LogRecord[];
  /** Log records or spans in the request, read or not. */
  items: number;
  /** Of those, how many were rejected, by reason. */
  rejected: Partial<Record<OtlpRejection, number>>;
}

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/**
 * The body as the sender encoded it, decompressed (`gzip`, `deflate`, or none) to at most `maxBytes`:
 * OtlpTooLarge beyond, OtlpUndecodable when the compressed stream is broken.
 */
export async function inflateOtlpBody(body: Buffer, contentEncoding: string | undefined, maxBytes: number = OTLP_LIMITS.decodedBytes): Promise<Buffer> {
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') {
    if (body.length > maxBytes) throw new OtlpTooLarge(`The body is larger than ${maxBytes} bytes`);
    return body;
  }
  const inflater = encoding === 'gzip' || encoding === 'x-gzip' ? gunzipAsync : encoding === 'deflate' ? inflateAsync : undefined;
  if (inflater === undefined) throw new OtlpUnsupportedEncoding('Content-Encoding must be gzip, deflate or identity');
  try {
    return await inflater(body, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new OtlpTooLarge(`The body is larger than ${maxBytes} bytes once decompressed`);
    throw new OtlpUndecodable(`The body is not valid ${encoding} data`);
  }
}

/** The log records of an `ExportLogsServiceRequest` (decompressed), every severity. */
export function decodeOtlpLogs(body: Buffer, encoding: OtlpEncoding): OtlpDecoded {
  const request = encoding === 'json' ? logsFromJson(parseJson(body)) : logsFromProtobuf(body);
  const out = newDecoded();
  for (const resourceLogs of request) {
    const resource = resourceLogs.resource;
    for (const scopeLogs of resourceLogs.scopes) {
      for (const item of scopeLogs.items) {
        if (!admit(out)) continue;
        if (isUnreadable(item)) reject(out, 'unreadable_record');
        else out.records.push(logRecordOf(resource, scopeLogs.scope, item));
      }
    }
  }
  return out;
}

/** One record per span event named `exception` of an `ExportTraceServiceRequest` (decompressed). */
export function decodeOtlpTraces(body: Buffer, encoding: OtlpEncoding): OtlpDecoded {
  const request = encoding === 'json' ? tracesFromJson(parseJson(body)) : tracesFromProtobuf(body);
  const out = newDecoded();
  for (const resourceSpans of request) {
    const resource = resourceSpans.resource;
    for (const scopeSpans of resourceSpans.scopes) {
      for (const item of scopeSpans.items) {
        if (!admit(out)) continue;
        if (isUnreadable(item)) {
          reject(out, 'unreadable_record');
          continue;
        }
        for (const event of item.events) {
          if (event.name === 'exception') out.records.push(exceptionRecordOf(resource, scopeSpans.scope, item, event));
        }
      }
    }
  }
  return out;
}

/** How many were rejected in all. */
export function rejectedCount(decoded: OtlpDecoded): number {
  return Object.values(decoded.rejected).reduce((sum, n) => sum + n, 0);
}

// ---------------------------------------------------------------------------------------------------
// The model both encodings are read into.

/** An AnyValue as plain JSON: int64 beyond 2^53 as a decimal string, bytes as base64, empty as null. */
type Value = string | number | boolean | null | Value[] | { [key: string]: Value };
type Attributes = Array<[string, Value]>;

interface Scope {
  name: string;
  version: string;
  attributes: Attributes;
}

interface OtelLog {
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  severityNumber: number;
  severityText: string;
  body: Value | undefined;
  attributes: Attributes;
  traceId: string;
  spanId: string;
  eventName: string;
}

interface OtelEvent {
  timeUnixNano: bigint;
  name: string;
  attributes: Attributes;
}

interface OtelSpan {
  traceId: string;
  spanId: string;
  name: string;
  startTimeUnixNano: bigint;
  attributes: Attributes;
  events: OtelEvent[];
}

/** A log record or span that could not be read (its neighbours still are). */
interface Unreadable {
  unreadable: true;
}
const UNREADABLE: Unreadable = { unreadable: true };

interface ResourceItems<T> {
  resource: Attributes;
  scopes: Array<{ scope: Scope; items: Array<T | Unreadable> }>;
}

const EMPTY_SCOPE: Scope = { name: '', version: '', attributes: [] };

function isUnreadable<T extends object>(item: T | Unreadable): item is Unreadable {
  return 'unreadable' in item;
}

function newDecoded(): OtlpDecoded {
  return { records: [], items: 0, rejected: {} };
}

function reject(out: OtlpDecoded, reason: OtlpRejection): void {
  out.rejected[reason] = (out.rejected[reason] ?? 0) + 1;
}

/** Counts one more item; false (and rejected) past OTLP_LIMITS.items. */
function admit(out: OtlpDecoded): boolean {
  out.items += 1;
  if (out.items <= OTLP_LIMITS.items) return true;
  reject(out, 'too_many_records');
  return false;
}

// ---------------------------------------------------------------------------------------------------
// From the model to LogRecords.

/** An attribute's value as text: a string as it is, anything else as JSON. */
function valueText(value: Value): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function attribute(attributes: Attributes, key: string): string | undefined {
  for (let i = attributes.length - 1; i >= 0; i -= 1) {
    const [name, value] = attributes[i]!;
    if (name === key) return valueText(value);
  }
  return undefined;
}

const EXCEPTION_KEYS = new Set(['exception.type', 'exception.message', 'exception.stacktrace']);

/** Fields as text, by key (a later list overrides an earlier one), at most MAX_FIELDS, each bounded. */
function fieldsOf(lists: Attributes[], extra: Array<[string, string]>): Record<string, string> {
  const fields: Record<string, string> = {};
  let count = 0;
  const put = (key: string, value: string) => {
    const name = boundedText(key, MAX_FIELD_CHARS);
    if (!(name in fields)) {
      if (count >= MAX_FIELDS) return;
      count += 1;
    }
    fields[name] = boundedText(value, MAX_FIELD_CHARS);
  };
  for (const [key, value] of extra) if (value !== '') put(key, value);
  for (const list of lists) for (const [key, value] of list) if (!EXCEPTION_KEYS.has(key)) put(key, valueText(value));
  return fields;
}

function scopeFields(scope: Scope): Array<[string, string]> {
  return [['otel.scope.name', scope.name], ['otel.scope.version', scope.version]];
}

/** A time in nanoseconds since the epoch as a Date; undefined for 0 (unset) or one out of range. */
function dateOf(nanos: bigint): Date | undefined {
  if (nanos <= 0n) return undefined;
  const date = new Date(Number(nanos / 1_000_000n));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function attributesObject(attributes: Attributes): Record<string, Value> {
  return Object.fromEntries(attributes);
}

/** The record as JSON (attributes as an object), bounded: what LogRecord.raw keeps. */
function rawOf(record: Record<string, unknown>): string {
  const raw = JSON.stringify(record, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  return boundedText(raw);
}

/** The `exception.*` attributes as an exception, when `exception.type` or `exception.message` is there. */
function exceptionOf(attributes: Attributes): LogRecord['exception'] {
  const type = attribute(attributes, 'exception.type');
  const message = attribute(attributes, 'exception.message');
  if (type === undefined && message === undefined) return undefined;
  const stacktrace = attribute(attributes, 'exception.stacktrace');
  return {
    type: boundedText(type ?? '', MAX_FIELD_CHARS),
    message: boundedText(message ?? ''),
    stacktrace: stacktrace === undefined ? undefined : boundedText(stacktrace),
  };
}

function logRecordOf(resource: Attributes, scope: Scope, log: OtelLog): LogRecord {
  const exception = exceptionOf(log.attributes);
  const body = log.body === undefined || log.body === null ? (exception?.message ?? '') : valueText(log.body);
  const record: LogRecord = {
    source: 'otlp',
    host: attribute(resource, 'host.name'),
    program: attribute(resource, 'service.name'),
    severity: otlpSeverity(log.severityNumber),
    message: boundedText(body),
    timestamp: dateOf(log.timeUnixNano) ?? dateOf(log.observedTimeUnixNano),
    fields: fieldsOf([resource, scope.attributes, log.attributes], [
      ...scopeFields(scope),
      ['severity_text', log.severityText],
      ['event_name', log.eventName],
      ['trace_id', log.traceId],
      ['span_id', log.spanId],
    ]),
    raw: rawOf({ ...log, attributes: attributesObject(log.attributes) }),
  };
  if (exception !== undefined) record.exception = exception;
  return record;
}

const EXCEPTION_SEVERITY: Severity = 3;

function exceptionRecordOf(resource: Attributes, scope: Scope, span: OtelSpan, event: OtelEvent): LogRecord {
  const exception = exceptionOf(event.attributes) ?? { type: '', message: '', stacktrace: undefined };
  return {
    source: 'otlp',
    host: attribute(resource, 'host.name'),
    program: attribute(resource, 'service.name'),
    severity: EXCEPTION_SEVERITY,
    message: exception.message,
    timestamp: dateOf(event.timeUnixNano) ?? dateOf(span.startTimeUnixNano),
    exception,
    fields: fieldsOf([resource, scope.attributes, span.attributes, event.attributes], [
      ...scopeFields(scope),
      ['span_name', span.name],
      ['trace_id', span.traceId],
      ['span_id', span.spanId],
    ]),
    raw: rawOf({
      traceId: span.traceId,
      spanId: span.spanId,
      name: span.name,
      event: { timeUnixNano: event.timeUnixNano, name: event.name, attributes: attributesObject(event.attributes) },
    }),
  };
}

// ---------------------------------------------------------------------------------------------------
// Protobuf.

/** A protobuf message that does not follow the wire format. */
class WireError extends Error {}

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

/** Reads one protobuf message: tags, varints, fixed 32/64-bit numbers and length-delimited fields. */
class ProtoReader {
  pos: number;
  constructor(
    private readonly buf: Buffer,
    start = 0,
    private readonly end = buf.length,
  ) {
    this.pos = start;
  }

  more(): boolean {
    return this.pos < this.end;
  }

  /** The next field's number and wire type. */
  tag(): { field: number; wire: number } {
    const key = this.varint();
    const field = Math.floor(key / 8);
    if (field === 0) throw new WireError('field number 0');
    return { field, wire: key % 8 };
  }

  /** A varint as a number (exact up to 2^53; the rest of a longer one is read and cut). */
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i += 1) {
      if (this.pos >= this.end) throw new WireError('truncated varint');
      const byte = this.buf[this.pos++]!;
      if (scale < 2 ** 53) result += (byte & 0x7f) * scale;
      scale *= 128;
      if (byte < 0x80) return result;
    }
    throw new WireError('varint longer than 10 bytes');
  }

  /** A varint as a signed 64-bit integer (int64's two's complement). */
  int64(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i += 1) {
      if (this.pos >= this.end) throw new WireError('truncated varint');
      const byte = this.buf[this.pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      shift += 7n;
      if (byte < 0x80) return BigInt.asIntN(64, result);
    }
    throw new WireError('varint longer than 10 bytes');
  }

  private need(bytes: number): number {
    if (this.end - this.pos < bytes) throw new WireError('truncated field');
    const at = this.pos;
    this.pos += bytes;
    return at;
  }

  fixed64(): bigint {
    return this.buf.readBigUInt64LE(this.need(8));
  }

  double(): number {
    return this.buf.readDoubleLE(this.need(8));
  }

  /** A length-delimited field's bounds. */
  len(): { start: number; end: number } {
    const length = this.varint();
    const start = this.need(length);
    return { start, end: start + length };
  }

  bytes(): Buffer {
    const { start, end } = this.len();
    return this.buf.subarray(start, end);
  }

  string(): string {
    const { start, end } = this.len();
    return this.buf.toString('utf8', start, end);
  }

  /** A reader of the embedded message at this length-delimited field. */
  message(): ProtoReader {
    const { start, end } = this.len();
    return new ProtoReader(this.buf, start, end);
  }

  /** Skips a field of this wire type (groups, long deprecated, are refused). */
  skip(wire: number): void {
    if (wire === WIRE_VARINT) this.varint();
    else if (wire === WIRE_I64) this.need(8);
    else if (wire === WIRE_LEN) this.len();
    else if (wire === WIRE_I32) this.need(4);
    else throw new WireError(`wire type ${wire}`);
  }

  /** Calls `onField` for each field; a field of an unexpected wire type is refused, unknown ones skipped. */
  each(onField: (field: number, wire: number) => boolean): void {
    while (this.more()) {
      const { field, wire } = this.tag();
      if (!onField(field, wire)) this.skip(wire);
    }
  }
}

/** Throws unless the field has the wire type its declaration gives. */
function expect(wire: number, wanted: number): void {
  if (wire !== wanted) throw new WireError('unexpected wire type');
}

function protoAnyValue(reader: ProtoReader, depth: number): Value {
  if (depth > OTLP_LIMITS.valueDepth) throw new WireError('value nested too deep');
  let value: Value = null;
  reader.each((field, wire) => {
    switch (field) {
      case 1: expect(wire, WIRE_LEN); value = reader.string(); return true;
      case 2: expect(wire, WIRE_VARINT); value = reader.varint() !== 0; return true;
      case 3: { expect(wire, WIRE_VARINT); value = safeInteger(reader.int64()); return true; }
      case 4: expect(wire, WIRE_I64); value = finiteOrText(reader.double()); return true;
      case 5: { expect(wire, WIRE_LEN); const list: Value[] = []; const array = reader.message(); array.each((f, w) => { if (f !== 1) return false; expect(w, WIRE_LEN); list.push(protoAnyValue(array.message(), depth + 1)); return true; }); value = list; return true; }
      case 6: { expect(wire, WIRE_LEN); const kv = reader.message(); const object: Record<string, Value> = {}; kv.each((f, w) => { if (f !== 1) return false; expect(w, WIRE_LEN); const [key, item] = protoKeyValue(kv.message(), depth + 1); object[key] = item; return true; }); value = object; return true; }
      case 7: expect(wire, WIRE_LEN); value = reader.bytes().toString('base64'); return true;
      default: return false;
    }
  });
  return value;
}

function safeInteger(value: bigint): number | string {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

/** JSON has no NaN or Infinity: those are kept as protobuf's JSON mapping writes them. */
function finiteOrText(value: number): number | string {
  return Number.isFinite(value) ? value : String(value);
}

function protoKeyValue(reader: ProtoReader, depth: number): [string, Value] {
  let key = '';
  let value: Value = null;
  reader.each((field, wire) => {
    if (field === 1) { expect(wire, WIRE_LEN); key = reader.string(); return true; }
    if (field === 2) { expect(wire, WIRE_LEN); value = protoAnyValue(reader.message(), depth); return true; }
    return false;
  });
  return [key, value];
}

function protoAttribute(reader: ProtoReader, attributes: Attributes): void {
  attributes.push(protoKeyValue(reader.message(), 1));
}

/** Resource: attributes = 1. */
function protoResource(reader: ProtoReader): Attributes {
  const attributes: Attributes = [];
  reader.each((field, wire) => {
    if (field !== 1) return false;
    expect(wire, WIRE_LEN);
    protoAttribute(reader, attributes);
    return true;
  });
  return attributes;
}

/** InstrumentationScope: name = 1, version = 2, attributes = 3. */
function protoScope(reader: ProtoReader): Scope {
  const scope: Scope = { name: '', version: '', attributes: [] };
  reader.each((field, wire) => {
    if (field === 1) { expect(wire, WIRE_LEN); scope.name = reader.string(); return true; }
    if (field === 2) { expect(wire, WIRE_LEN); scope.version = reader.string(); return true; }
    if (field === 3) { expect(wire, WIRE_LEN); protoAttribute(reader, scope.attributes); return true; }
    return false;
  });
  return scope;
}

function hexOf(bytes: Buffer): string {
  return bytes.toString('hex');
}

/**
 * LogRecord: time_unix_nano = 1 (fixed64), severity_number = 2, severity_text = 3, body = 5,
 * attributes = 6, trace_id = 9, span_id = 10, observed_time_unix_nano = 11 (fixed64), event_name = 12.
 */
function protoLog(reader: ProtoReader): OtelLog {
  const log: OtelLog = { timeUnixNano: 0n, observedTimeUnixNano: 0n, severityNumber: 0, severityText: '', body: undefined, attributes: [], traceId: '', spanId: '', eventName: '' };
  reader.each((field, wire) => {
    switch (field) {
      case 1: expect(wire, WIRE_I64); log.timeUnixNano = reader.fixed64(); return true;
      case 2: expect(wire, WIRE_VARINT); log.severityNumber = reader.varint(); return true;
      case 3: expect(wire, WIRE_LEN); log.severityText = reader.string(); return true;
      case 5: expect(wire, WIRE_LEN); log.body = protoAnyValue(reader.message(), 1); return true;
      case 6: expect(wire, WIRE_LEN); protoAttribute(reader, log.attributes); return true;
      case 9: expect(wire, WIRE_LEN); log.traceId = hexOf(reader.bytes()); return true;
      case 10: expect(wire, WIRE_LEN); log.spanId = hexOf(reader.bytes()); return true;
      case 11: expect(wire, WIRE_I64); log.observedTimeUnixNano = reader.fixed64(); return true;
      case 12: expect(wire, WIRE_LEN); log.eventName = reader.string(); return true;
      default: return false;
    }
  });
  return log;
}

/** Span.Event: time_unix_nano = 1 (fixed64), name = 2, attributes = 3. */
function protoEvent(reader: ProtoReader): OtelEvent {
  const event: OtelEvent = { timeUnixNano: 0n, name: '', attributes: [] };
  reader.each((field, wire) => {
    if (field === 1) { expect(wire, WIRE_I64); event.timeUnixNano = reader.fixed64(); return true; }
    if (field === 2) { expect(wire, WIRE_LEN); event.name = reader.string(); return true; }
    if (field === 3) { expect(wire, WIRE_LEN); protoAttribute(reader, event.attributes); return true; }
    return false;
  });
  return event;
}

/** Span: trace_id = 1, span_id = 2, name = 5, start_time_unix_nano = 7 (fixed64), attributes = 9, events = 11. */
function protoSpan(reader: ProtoReader): OtelSpan {
  const span: OtelSpan = { traceId: '', spanId: '', name: '', startTimeUnixNano: 0n, attributes: [], events: [] };
  reader.each((field, wire) => {
    switch (field) {
      case 1: expect(wire, WIRE_LEN); span.traceId = hexOf(reader.bytes()); return true;
      case 2: expect(wire, WIRE_LEN); span.spanId = hexOf(reader.bytes()); return true;
      case 5: expect(wire, WIRE_LEN); span.name = reader.string(); return true;
      case 7: expect(wire, WIRE_I64); span.startTimeUnixNano = reader.fixed64(); return true;
      case 9: expect(wire, WIRE_LEN); protoAttribute(reader, span.attributes); return true;
      case 11: expect(wire, WIRE_LEN); span.events.push(protoEvent(reader.message())); return true;
      default: return false;
    }
  });
  return span;
}

/** An item (log record or span) read alone: one that breaks the wire format is unreadable, not the whole body. */
function protoItem<T>(reader: ProtoReader, read: (item: ProtoReader) => T): T | Unreadable {
  const item = reader.message();
  try {
    return read(item);
  } catch (error) {
    if (error instanceof WireError) return UNREADABLE;
    throw error;
  }
}

/**
 * The Export*ServiceRequest's resource_* = 1; each Resource* has resource = 1 and scope_* = 2; each
 * Scope* has scope = 1 and its items (log_records, spans) = 2.
 */
function protoRequest<T>(body: Buffer, read: (item: ProtoReader) => T): Array<ResourceItems<T>> {
  const out: Array<ResourceItems<T>> = [];
  try {
    const request = new ProtoReader(body);
    request.each((field, wire) => {
      if (field !== 1) return false;
      expect(wire, WIRE_LEN);
      const resourceReader = request.message();
      const resource: ResourceItems<T> = { resource: [], scopes: [] };
      resourceReader.each((f, w) => {
        if (f === 1) { expect(w, WIRE_LEN); resource.resource = protoResource(resourceReader.message()); return true; }
        if (f !== 2) return false;
        expect(w, WIRE_LEN);
        const scopeReader = resourceReader.message();
        const scope: { scope: Scope; items: Array<T | Unreadable> } = { scope: EMPTY_SCOPE, items: [] };
        scopeReader.each((sf, sw) => {
          if (sf === 1) { expect(sw, WIRE_LEN); scope.scope = protoScope(scopeReader.message()); return true; }
          if (sf !== 2) return false;
          expect(sw, WIRE_LEN);
          scope.items.push(protoItem(scopeReader, read));
          return true;
        });
        resource.scopes.push(scope);
        return true;
      });
      out.push(resource);
      return true;
    });
  } catch (error) {
    if (error instanceof WireError) throw new OtlpUndecodable(`The body is not a protobuf-encoded request (${error.message})`);
    throw error;
  }
  return out;
}

function logsFromProtobuf(body: Buffer): Array<ResourceItems<OtelLog>> {
  return protoRequest(body, protoLog);
}

function tracesFromProtobuf(body: Buffer): Array<ResourceItems<OtelSpan>> {
  return protoRequest(body, protoSpan);
}

// ---------------------------------------------------------------------------------------------------
// OTLP JSON: lowerCamelCase names, hex ids, int64 as a string or a number, enums as integers,
// unknown fields ignored.

/** A JSON value that is not what the field must be. */
class ShapeError extends Error {}

type Json = unknown;

function parseJson(body: Buffer): Json {
  try {
    return JSON.parse(body.toString('utf8')) as Json;
  } catch {
    throw new OtlpUndecodable('The body is not valid JSON');
  }
}

function isObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object, or the empty object when the field is absent or null. */
function objectField(value: Json): Record<string, Json> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new ShapeError('not an object');
  return value;
}

function listField(value: Json): Json[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ShapeError('not a list');
  return value;
}

function stringField(value: Json): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new ShapeError('not a string');
  return value;
}

/** An int64/uint64/fixed64 as JSON carries it: a decimal string or a number. */
function int64Field(value: Json): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) return BigInt(value);
  throw new ShapeError('not an integer');
}

/** An enum or int32 as an integer. */
function intField(value: Json): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  throw new ShapeError('not an integer');
}

/** A trace or span id: hex of `bytes` digits in OTLP JSON (not base64); empty when unset. */
function hexIdField(value: Json, bytes: number): string {
  const id = stringField(value);
  if (id !== '' && !new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(id)) throw new ShapeError('not a hex id');
  return id.toLowerCase();
}

function jsonAnyValue(value: Json, depth: number): Value {
  if (depth > OTLP_LIMITS.valueDepth) throw new ShapeError('value nested too deep');
  const any = objectField(value);
  if ('stringValue' in any) return stringField(any['stringValue']);
  if ('boolValue' in any) {
    if (typeof any['boolValue'] !== 'boolean') throw new ShapeError('not a boolean');
    return any['boolValue'];
  }
  if ('intValue' in any) return safeInteger(int64Field(any['intValue']));
  if ('doubleValue' in any) {
    const double = any['doubleValue'];
    if (typeof double === 'number') return double;
    if (double === 'NaN' || double === 'Infinity' || double === '-Infinity') return double;
    throw new ShapeError('not a number');
  }
  if ('arrayValue' in any) return listField(objectField(any['arrayValue'])['values']).map((item) => jsonAnyValue(item, depth + 1));
  if ('kvlistValue' in any) {
    const object: Record<string, Value> = {};
    for (const item of listField(objectField(any['kvlistValue'])['values'])) {
      const [key, itemValue] = jsonKeyValue(item, depth + 1);
      object[key] = itemValue;
    }
    return object;
  }
  if ('bytesValue' in any) return stringField(any['bytesValue']);
  return null;
}

function jsonKeyValue(value: Json, depth: number): [string, Value] {
  const kv = objectField(value);
  return [stringField(kv['key']), jsonAnyValue(kv['value'], depth)];
}

function jsonAttributes(value: Json): Attributes {
  return listField(value).map((item) => jsonKeyValue(item, 1));
}

function jsonScope(value: Json): Scope {
  const scope = objectField(value);
  return { name: stringField(scope['name']), version: stringField(scope['version']), attributes: jsonAttributes(scope['attributes']) };
}

function jsonLog(value: Json): OtelLog {
  const log = objectField(value);
  return {
    timeUnixNano: int64Field(log['timeUnixNano']),
    observedTimeUnixNano: int64Field(log['observedTimeUnixNano']),
    severityNumber: intField(log['severityNumber']),
    severityText: stringField(log['severityText']),
    body: log['body'] === undefined || log['body'] === null ? undefined : jsonAnyValue(log['body'], 1),
    attributes: jsonAttributes(log['attributes']),
    traceId: hexIdField(log['traceId'], 16),
    spanId: hexIdField(log['spanId'], 8),
    eventName: stringField(log['eventName']),
  };
}

function jsonEvent(value: Json): OtelEvent {
  const event = objectField(value);
  return { timeUnixNano: int64Field(event['timeUnixNano']), name: stringField(event['name']), attributes: jsonAttributes(event['attributes']) };
}

function jsonSpan(value: Json): OtelSpan {
  const span = objectField(value);
  return {
    traceId: hexIdField(span['traceId'], 16),
    spanId: hexIdField(span['spanId'], 8),
    name: stringField(span['name']),
    startTimeUnixNano: int64Field(span['startTimeUnixNano']),
    attributes: jsonAttributes(span['attributes']),
    events: listField(span['events']).map(jsonEvent),
  };
}

function jsonItem<T>(value: Json, read: (item: Json) => T): T | Unreadable {
  try {
    return read(value);
  } catch (error) {
    if (error instanceof ShapeError) return UNREADABLE;
    throw error;
  }
}

/** `{resourceLogs: [{resource, scopeLogs: [{scope, logRecords: [...]}]}]}`, and the same for spans. */
function jsonRequest<T>(body: Json, names: { resources: string; scopes: string; items: string }, read: (item: Json) => T): Array<ResourceItems<T>> {
  try {
    return listField(objectField(body)[names.resources]).map((resourceValue) => {
      const resource = objectField(resourceValue);
      return {
        resource: jsonAttributes(objectField(resource['resource'])['attributes']),
        scopes: listField(resource[names.scopes]).map((scopeValue) => {
          const scope = objectField(scopeValue);
          return { scope: jsonScope(scope['scope']), items: listField(scope[names.items]).map((item) => jsonItem(item, read)) };
        }),
      };
    });
  } catch (error) {
    if (error instanceof ShapeError) throw new OtlpUndecodable(`The body is not an OTLP JSON request (${error.message})`);
    throw error;
  }
}

function logsFromJson(body: Json): Array<ResourceItems<OtelLog>> {
  if (!isObject(body)) throw new OtlpUndecodable('The body is not an OTLP JSON request (not an object)');
  return jsonRequest(body, { resources: 'resourceLogs', scopes: 'scopeLogs', items: 'logRecords' }, jsonLog);
}

function tracesFromJson(body: Json): Array<ResourceItems<OtelSpan>> {
  if (!isObject(body)) throw new OtlpUndecodable('The body is not an OTLP JSON request (not an object)');
  return jsonRequest(body, { resources: 'resourceSpans', scopes: 'scopeSpans', items: 'spans' }, jsonSpan);
}
