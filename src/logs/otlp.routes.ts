import type { FastifyError, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { ClientError } from '../shared/problems.js';
import type { LogRecord } from './log-record.js';
import {
  decodeOtlpLogs,
  decodeOtlpTraces,
  inflateOtlpBody,
  OTLP_LIMITS,
  type OtlpDecoded,
  type OtlpEncoding,
  type OtlpSignal,
  OtlpTooLarge,
  OtlpUndecodable,
  OtlpUnsupportedEncoding,
  rejectedCount,
} from './otlp-decode.js';

/**
 * The OpenTelemetry receiver (docs/log-sources.md#opentelemetry-otlphttp): OTLP/HTTP `POST /v1/logs` and `POST /v1/traces`,
 * protobuf or JSON, gzip or not, authenticated by `Authorization: Bearer <key>`, answered as the OTLP/HTTP
 * specification says (docs/log-sources.md#opentelemetry-otlphttp): 200 with an Export*ServiceResponse in the
 * request's encoding (`partial_success` when some were rejected), a google.rpc.Status for every error.
 */

export const OTLP_LOGS_PATH = '/v1/logs';
export const OTLP_TRACES_PATH = '/v1/traces';

export const OTLP_ROUTES: readonly RouteSpec[] = [
  { method: 'POST', path: OTLP_LOGS_PATH, summary: 'OpenTelemetry log records (OTLP/HTTP): those at ERROR or worse recorded as infrastructure errors', who: 'ingest key', formats: false, answers: { 200: { logSource: 'otlp' } } },
  { method: 'POST', path: OTLP_TRACES_PATH, summary: 'OpenTelemetry spans (OTLP/HTTP): their exception events recorded as infrastructure errors', who: 'ingest key', formats: false, answers: { 200: { logSource: 'otlp' } } },
];

/** Why a request, or an item in it, was dropped (docs/log-sources.md#opentelemetry-otlphttp). */
export type OtlpDropReason =
  | 'unauthenticated'
  | 'unsupported_media_type'
  | 'too_large'
  | 'undecodable'
  | 'throttled'
  | 'unreadable_record'
  | 'too_many_records'
  | 'rejected';

/**
 * The receiver's counters, for /metrics: requests received, records `accept` took (those it refused are
 * `dropped.rejected`), and what was dropped by reason (whole requests for unauthenticated ... throttled; log records or spans for
 * unreadable_record, too_many_records, and rejected by `accept`).
 */
export interface OtlpCounters {
  received: number;
  records: number;
  dropped: Record<OtlpDropReason, number>;
}

export function newOtlpCounters(): OtlpCounters {
  return {
    received: 0,
    records: 0,
    dropped: { unauthenticated: 0, unsupported_media_type: 0, too_large: 0, undecodable: 0, throttled: 0, unreadable_record: 0, too_many_records: 0, rejected: 0 },
  };
}

/**
 * Thrown by `accept` when cmi cannot take the records now: answered `status` (429 or 503) with
 * Retry-After, which OTLP exporters honour by sending the same request again later.
 */
export class OtlpThrottled extends Error {
  constructor(
    readonly status: 429 | 503,
    readonly retryAfterSeconds: number,
    message = status === 429 ? 'Too many records, try again later' : 'cmi cannot take records now, try again later',
  ) {
    super(message);
  }
}

export interface OtlpRoutesOptions<Key> {
  /** The key a bearer token names, if it may send from `address` (the request's); undefined refuses it (401). */
  authenticate(bearerToken: string, address: string): Promise<Key | undefined>;
  /**
   * Takes the records read from one request (every severity; the caller filters), perhaps none; says how
   * many it rejected. Throws OtlpThrottled (or a 429/503 ClientError) to have the sender retry later.
   */
  accept(key: Key, records: LogRecord[], signal: OtlpSignal): Promise<{ rejected: number }>;
  counters?: OtlpCounters;
  /** The body's limits as sent and once decompressed (default OTLP_LIMITS). */
  bodyBytes?: number;
  decodedBytes?: number;
}

/** An error answered with a google.rpc.Status; `code` is gRPC's (the specification lets it be omitted). */
class OtlpRefusal extends Error {
  constructor(
    readonly status: number,
    readonly grpcCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const GRPC = { INVALID_ARGUMENT: 3, RESOURCE_EXHAUSTED: 8, UNAVAILABLE: 14, UNAUTHENTICATED: 16 } as const;

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

/** The encoding a request's Content-Type names; undefined for another type. */
export function otlpEncodingOf(contentType: string | undefined): OtlpEncoding | undefined {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === PROTOBUF) return 'protobuf';
  if (media === JSON_TYPE) return 'json';
  return undefined;
}

/** The bearer token of an Authorization header, if it has one. */
export function bearerTokenOf(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return match?.[1];
}

// Protobuf writing, for the answers: varints and length-delimited fields.

function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return bytes;
}

function lengthDelimited(field: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([...varint(field * 8 + 2), ...varint(payload.length)]), payload]);
}

function varintField(field: number, value: number): Buffer {
  return Buffer.from([...varint(field * 8), ...varint(value)]);
}

/** google.rpc.Status: code = 1, message = 2. */
function statusProtobuf(code: number, message: string): Buffer {
  return Buffer.concat([varintField(1, code), lengthDelimited(2, Buffer.from(message))]);
}

/** Export*ServiceResponse: partial_success = 1 { rejected_log_records | rejected_spans = 1, error_message = 2 }; empty for full success. */
function responseProtobuf(rejected: number, message: string): Buffer {
  if (rejected === 0) return Buffer.alloc(0);
  return lengthDelimited(1, Buffer.concat([varintField(1, rejected), lengthDelimited(2, Buffer.from(message))]));
}

function responseJson(signal: OtlpSignal, rejected: number, message: string): string {
  if (rejected === 0) return '{}';
  const count = signal === 'logs' ? 'rejectedLogRecords' : 'rejectedSpans';
  // int64 is a decimal string in protobuf's JSON mapping.
  return JSON.stringify({ partialSuccess: { [count]: String(rejected), errorMessage: message } });
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** partial_success's error_message: what was rejected and why. */
function rejectionMessage(signal: OtlpSignal, decoded: OtlpDecoded, refused: number): string {
  const [one, many] = signal === 'logs' ? ['log record', 'log records'] : ['span', 'spans'];
  const parts: string[] = [];
  const unreadable = decoded.rejected.unreadable_record ?? 0;
  const tooMany = decoded.rejected.too_many_records ?? 0;
  if (unreadable > 0) parts.push(`${plural(unreadable, one, many)} could not be read`);
  if (tooMany > 0) parts.push(`${plural(tooMany, one, many)} past the limit of ${OTLP_LIMITS.items} per request`);
  if (refused > 0) parts.push(`${plural(refused, 'record', 'records')} refused by cmi`);
  return parts.join('; ');
}

/** What a thrown error is answered with, or undefined for a fault of cmi (left to the application's handler). */
function refusalOf(error: FastifyError | Error): OtlpRefusal | undefined {
  if (error instanceof OtlpRefusal) return error;
  if (error instanceof OtlpUndecodable) return new OtlpRefusal(400, GRPC.INVALID_ARGUMENT, error.message);
  if (error instanceof OtlpTooLarge) return new OtlpRefusal(413, GRPC.RESOURCE_EXHAUSTED, error.message);
  if (error instanceof OtlpUnsupportedEncoding) return new OtlpRefusal(415, GRPC.INVALID_ARGUMENT, error.message);
  if (error instanceof OtlpThrottled) {
    return new OtlpRefusal(error.status, error.status === 429 ? GRPC.RESOURCE_EXHAUSTED : GRPC.UNAVAILABLE, error.message, { 'retry-after': String(error.retryAfterSeconds) });
  }
  if (error instanceof ClientError && (error.status === 429 || error.status === 503)) {
    return new OtlpRefusal(error.status, error.status === 429 ? GRPC.RESOURCE_EXHAUSTED : GRPC.UNAVAILABLE, error.message, error.headers);
  }
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new OtlpRefusal(413, GRPC.RESOURCE_EXHAUSTED, 'The body is too large');
  const status = (error as FastifyError).statusCode;
  if (status !== undefined && status >= 400 && status < 500) return new OtlpRefusal(status, GRPC.INVALID_ARGUMENT, 'The request cannot be read');
  return undefined;
}

function dropReasonOf(refusal: OtlpRefusal): OtlpDropReason | undefined {
  switch (refusal.status) {
    case 401: return 'unauthenticated';
    case 413: return 'too_large';
    case 415: return 'unsupported_media_type';
    case 429: case 503: return 'throttled';
    default: return refusal.status >= 400 && refusal.status < 500 ? 'undecodable' : undefined;
  }
}

/** Sends the body with exactly this Content-Type (no charset parameter added). */
function sendAs(reply: FastifyReply, type: string, body: Buffer | string): FastifyReply {
  return reply.header('content-type', type).send(typeof body === 'string' ? Buffer.from(body) : body);
}

/** Sends a google.rpc.Status, protobuf for a protobuf request, JSON otherwise. */
function sendStatus(reply: FastifyReply, request: FastifyRequest, refusal: OtlpRefusal): FastifyReply {
  reply.code(refusal.status).headers(refusal.headers);
  if (otlpEncodingOf(request.headers['content-type']) === 'protobuf') return sendAs(reply, PROTOBUF, statusProtobuf(refusal.grpcCode, refusal.message));
  return sendAs(reply, JSON_TYPE, JSON.stringify({ code: refusal.grpcCode, message: refusal.message }));
}

/**
 * The OTLP/HTTP endpoints as a fastify plugin, in a context of its own: its own content-type parsers
 * (protobuf and JSON, read as bytes up to `bodyBytes`; any other type 415), the bearer token checked
 * before the body is read, its errors answered as google.rpc.Status; a fault of cmi goes on to the
 * application's error handler.
 */
export function otlpRoutes<Key>(options: OtlpRoutesOptions<Key>): FastifyPluginCallback {
  const counters = options.counters ?? newOtlpCounters();
  const bodyLimit = options.bodyBytes ?? OTLP_LIMITS.bodyBytes;
  const decodedBytes = options.decodedBytes ?? OTLP_LIMITS.decodedBytes;
  const keys = new WeakMap<FastifyRequest, Key>();

  return (app, _opts, done) => {
    app.removeAllContentTypeParsers();
    const asBytes = (_request: FastifyRequest, body: Buffer, parsed: (error: Error | null, body?: Buffer) => void) => parsed(null, body);
    app.addContentTypeParser(PROTOBUF, { parseAs: 'buffer', bodyLimit }, asBytes);
    app.addContentTypeParser(JSON_TYPE, { parseAs: 'buffer', bodyLimit }, asBytes);
    app.addContentTypeParser('*', (_request, _payload, parsed) =>
      parsed(new OtlpRefusal(415, GRPC.INVALID_ARGUMENT, 'Content-Type must be application/x-protobuf or application/json')));

    app.addHook('onRequest', async (request) => {
      counters.received += 1;
      const token = bearerTokenOf(request.headers.authorization);
      const key = token === undefined ? undefined : await options.authenticate(token, request.ip);
      if (key === undefined) {
        throw new OtlpRefusal(401, GRPC.UNAUTHENTICATED, token === undefined ? 'An Authorization: Bearer header with an OTLP ingest key is required' : 'The bearer token is not a valid OTLP ingest key');
      }
      keys.set(request, key);
    });

    app.setErrorHandler((error: FastifyError, request, reply) => {
      const refusal = refusalOf(error);
      if (refusal === undefined) throw error;
      const reason = dropReasonOf(refusal);
      if (reason !== undefined) counters.dropped[reason] += 1;
      request.log.debug({ status: refusal.status, requestId: request.id }, refusal.message);
      return sendStatus(reply, request, refusal);
    });

    const handle = (signal: OtlpSignal) => async (request: FastifyRequest, reply: FastifyReply) => {
      const key = keys.get(request)!;
      const encoding = otlpEncodingOf(request.headers['content-type']);
      if (encoding === undefined || !Buffer.isBuffer(request.body)) {
        throw new OtlpRefusal(415, GRPC.INVALID_ARGUMENT, 'Content-Type must be application/x-protobuf or application/json');
      }
      const body = await inflateOtlpBody(request.body, request.headers['content-encoding'], decodedBytes);
      const decoded = signal === 'logs' ? decodeOtlpLogs(body, encoding) : decodeOtlpTraces(body, encoding);
      const { rejected: refusedRecords } = await options.accept(key, decoded.records, signal);
      const refused = Math.max(0, Math.min(refusedRecords, decoded.records.length));
      counters.records += decoded.records.length - refused;
      counters.dropped.unreadable_record += decoded.rejected.unreadable_record ?? 0;
      counters.dropped.too_many_records += decoded.rejected.too_many_records ?? 0;
      counters.dropped.rejected += refused;
      // A record refused counts as one rejected item (a span's several exceptions, at most the span).
      const rejected = Math.min(decoded.items, rejectedCount(decoded) + refused);
      const message = rejectionMessage(signal, decoded, refused);
      reply.code(200);
      if (encoding === 'protobuf') return sendAs(reply, PROTOBUF, responseProtobuf(rejected, message));
      return sendAs(reply, JSON_TYPE, responseJson(signal, rejected, message));
    };

    const config = { config: { public: true } };
    app.post(OTLP_LOGS_PATH, config, handle('logs'));
    app.post(OTLP_TRACES_PATH, config, handle('traces'));
    done();
  };
}
