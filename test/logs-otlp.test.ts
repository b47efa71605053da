import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, type ReadableLogRecord, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { LogRecord } from '../src/logs/log-record.js';
import { newOtlpCounters, OtlpThrottled, otlpRoutes } from '../src/logs/otlp.routes.js';
import type { OtlpSignal } from '../src/logs/otlp-decode.js';

const KEY = 'otlp-public-key-1';
/** The exporters' `compression` option takes otlp-exporter-base's CompressionAlgorithm enum, whose value this is. */
const GZIP = 'gzip' as ConstructorParameters<typeof ProtoLogExporter>[0] extends infer C ? C extends { compression?: infer A } ? A : never : never;
const resource = resourceFromAttributes({ 'service.name': 'billing', 'host.name': 'hv-7', 'deployment.environment': 'prod' });

interface Accepted { key: { id: number }; records: LogRecord[]; signal: OtlpSignal }
type Mode = 'take' | 'refuse-one' | 'throttle-429' | 'throttle-503';

describe('the OTLP/HTTP reader, against the OpenTelemetry JS SDK exporters', () => {
  let app: FastifyInstance;
  let base: string;
  let mode: Mode = 'take';
  const accepted: Accepted[] = [];
  const seen: Array<{ url: string; type: string | undefined; encoding: string | undefined }> = [];
  const counters = newOtlpCounters();

  before(async () => {
    app = Fastify({ forceCloseConnections: true });
    app.addHook('onRequest', (request, _reply, done) => {
      seen.push({ url: request.url, type: request.headers['content-type'], encoding: request.headers['content-encoding'] });
      done();
    });
    await app.register(otlpRoutes({
      counters,
      authenticate: (token) => Promise.resolve(token === KEY ? { id: 1 } : undefined),
      accept: (key: { id: number }, records, signal) => {
        if (mode === 'throttle-429') return Promise.reject(new OtlpThrottled(429, 7));
        if (mode === 'throttle-503') return Promise.reject(new OtlpThrottled(503, 30));
        accepted.push({ key, records, signal });
        return Promise.resolve({ rejected: mode === 'refuse-one' ? 1 : 0 });
      },
    }));
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await app.close();
  });

  /** Log records as the SDK makes them, for an exporter to send. */
  function sdkLogs(): ReadableLogRecord[] {
    const memory = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
    const logger = provider.getLogger('cmi-test', '1.2.3');
    logger.emit({
      timestamp: new Date('2026-12-03T06:00:00.123Z'),
      observedTimestamp: new Date('2026-12-03T06:00:01.000Z'),
      severityNumber: SeverityNumber.ERROR,
      severityText: 'ERROR',
      body: 'disk /dev/sdb failed: I/O error',
      attributes: { 'exception.type': 'IOError', 'exception.message': 'read failed', 'exception.stacktrace': 'IOError: read failed\n    at read (disk.js:1:1)', 'disk.id': 7, retry: true },
    });
    logger.emit({
      timestamp: new Date('2026-12-03T06:00:02.000Z'),
      observedTimestamp: new Date('2026-12-03T06:00:02.500Z'),
      severityNumber: SeverityNumber.INFO,
      body: { event: 'started', workers: 4 },
    });
    return memory.getFinishedLogRecords();
  }

  /** A span with one recorded exception (and one other event), as the SDK makes it. */
  function sdkSpans(): ReadableSpan[] {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(memory)] });
    const span = provider.getTracer('cmi-test', '1.2.3').startSpan('charge card', { attributes: { 'card.kind': 'visa' } });
    span.addEvent('retrying', { attempt: 2 });
    const error = new TypeError('amount must be positive');
    error.stack = 'TypeError: amount must be positive\n    at charge (billing.js:10:5)';
    span.recordException(error, new Date('2026-12-03T06:00:03.000Z'));
    span.end();
    return memory.getFinishedSpans();
  }

  function send<T>(exporter: { export(items: T[], done: (result: ExportResult) => void): void; shutdown(): Promise<void> }, items: T[]): Promise<ExportResult> {
    return new Promise((resolve) => exporter.export(items, (result) => { void exporter.shutdown().then(() => resolve(result)); }));
  }

  const headers = { Authorization: `Bearer ${KEY}` };
  /** A POST with a deadline: a request that stalls fails the test instead of holding it. */
  const post = (url: string, init: { headers: Record<string, string>; body: Uint8Array | string }) =>
    fetch(url, { method: 'POST', ...init, signal: AbortSignal.timeout(10_000) });
  const logsUrl = () => `${base}/v1/logs`;
  const tracesUrl = () => `${base}/v1/traces`;

  function lastAccepted(): Accepted {
    const last = accepted.at(-1);
    assert.ok(last !== undefined, 'accept was called');
    return last;
  }

  /** The LogRecords of sdkLogs(), exactly (raw checked apart). */
  function expectedLogs(): Array<Omit<LogRecord, 'raw'>> {
    const common = { 'service.name': 'billing', 'host.name': 'hv-7', 'deployment.environment': 'prod', 'otel.scope.name': 'cmi-test', 'otel.scope.version': '1.2.3' };
    return [
      {
        source: 'otlp', host: 'hv-7', program: 'billing', severity: 3, message: 'disk /dev/sdb failed: I/O error',
        timestamp: new Date('2026-12-03T06:00:00.123Z'),
        exception: { type: 'IOError', message: 'read failed', stacktrace: 'IOError: read failed\n    at read (disk.js:1:1)' },
        fields: { ...common, severity_text: 'ERROR', 'disk.id': '7', retry: 'true' },
      },
      {
        source: 'otlp', host: 'hv-7', program: 'billing', severity: 6, message: '{"event":"started","workers":4}',
        timestamp: new Date('2026-12-03T06:00:02.000Z'),
        fields: common,
      },
    ];
  }

  const withoutRaw = (records: LogRecord[]): Array<Omit<LogRecord, 'raw'>> =>
    records.map((record) => Object.fromEntries(Object.entries(record).filter(([name]) => name !== 'raw')) as Omit<LogRecord, 'raw'>);

  it('takes log records from the JSON exporter: every severity, body, resource, attributes and exception as LogRecords', async () => {
    const result = await send(new JsonLogExporter({ url: logsUrl(), headers }), sdkLogs());
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    assert.equal(seen.at(-1)?.type, 'application/json');
    const { key, records, signal } = lastAccepted();
    assert.deepEqual(key, { id: 1 });
    assert.equal(signal, 'logs');
    assert.deepEqual(withoutRaw(records), expectedLogs());
    const raw = JSON.parse(records[0]!.raw) as Record<string, unknown>;
    assert.equal(raw['severityNumber'], 17);
    assert.equal(raw['body'], 'disk /dev/sdb failed: I/O error');
    assert.equal(raw['timeUnixNano'], '1796277600123000000');
    assert.deepEqual(JSON.parse(records[1]!.raw), {
      timeUnixNano: '1796277602000000000', observedTimeUnixNano: '1796277602500000000', severityNumber: 9, severityText: '',
      body: { event: 'started', workers: 4 }, attributes: {}, traceId: '', spanId: '', eventName: '',
    });
  });

  it('takes the same log records from the protobuf exporter, gzip-compressed, exactly as from JSON', async () => {
    await send(new JsonLogExporter({ url: logsUrl(), headers }), sdkLogs());
    const fromJson = lastAccepted().records;
    const result = await send(new ProtoLogExporter({ url: logsUrl(), headers, compression: GZIP }), sdkLogs());
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    assert.deepEqual(seen.at(-1), { url: '/v1/logs', type: 'application/x-protobuf', encoding: 'gzip' });
    assert.deepEqual(lastAccepted().records, fromJson);
    assert.deepEqual(withoutRaw(lastAccepted().records), expectedLogs());
  });

  it('takes the JSON exporter\'s gzip-compressed body too', async () => {
    const result = await send(new JsonLogExporter({ url: logsUrl(), headers, compression: GZIP }), sdkLogs());
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    assert.deepEqual(seen.at(-1), { url: '/v1/logs', type: 'application/json', encoding: 'gzip' });
    assert.deepEqual(withoutRaw(lastAccepted().records), expectedLogs());
  });

  it('turns a span\'s recorded exception into a record of severity err, from the JSON and the protobuf trace exporters', async () => {
    const spans = sdkSpans();
    const context = spans[0]!.spanContext();
    const expected: Array<Omit<LogRecord, 'raw'>> = [{
      source: 'otlp', host: 'hv-7', program: 'billing', severity: 3, message: 'amount must be positive',
      timestamp: new Date('2026-12-03T06:00:03.000Z'),
      exception: { type: 'TypeError', message: 'amount must be positive', stacktrace: 'TypeError: amount must be positive\n    at charge (billing.js:10:5)' },
      fields: {
        'otel.scope.name': 'cmi-test', 'otel.scope.version': '1.2.3', span_name: 'charge card', trace_id: context.traceId, span_id: context.spanId,
        'service.name': 'billing', 'host.name': 'hv-7', 'deployment.environment': 'prod', 'card.kind': 'visa',
      },
    }];
    const json = await send(new JsonTraceExporter({ url: tracesUrl(), headers }), spans);
    assert.equal(json.code, ExportResultCode.SUCCESS, String(json.error));
    assert.equal(lastAccepted().signal, 'traces');
    assert.deepEqual(withoutRaw(lastAccepted().records), expected);
    const fromJson = lastAccepted().records;
    const proto = await send(new ProtoTraceExporter({ url: tracesUrl(), headers, compression: GZIP }), spans);
    assert.equal(proto.code, ExportResultCode.SUCCESS, String(proto.error));
    assert.deepEqual(seen.at(-1), { url: '/v1/traces', type: 'application/x-protobuf', encoding: 'gzip' });
    assert.deepEqual(lastAccepted().records, fromJson);
    assert.equal((JSON.parse(fromJson[0]!.raw) as { name: string }).name, 'charge card');
  });

  it('refuses a bad bearer token with 401 (the exporter fails the export) before reading the body, and no header at all', async () => {
    const calls = accepted.length;
    const before401 = counters.dropped.unauthenticated;
    const result = await send(new ProtoLogExporter({ url: logsUrl(), headers: { Authorization: 'Bearer not-a-key' } }), sdkLogs());
    assert.equal(result.code, ExportResultCode.FAILED);
    assert.equal((result.error as { code?: number }).code, 401);
    const response = await post(logsUrl(), { headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.deepEqual(await response.json(), { code: 16, message: 'An Authorization: Bearer header with an OTLP ingest key is required' });
    const proto = await post(logsUrl(), { headers: { 'content-type': 'application/x-protobuf', authorization: 'Bearer wrong' }, body: new Uint8Array() });
    assert.equal(proto.status, 401);
    const refused = 'The bearer token is not a valid OTLP ingest key';
    assert.deepEqual(Buffer.from(await proto.arrayBuffer()), Buffer.concat([Buffer.from([0x08, 16, 0x12, refused.length]), Buffer.from(refused)]));
    assert.equal(accepted.length, calls);
    assert.equal(counters.dropped.unauthenticated, before401 + 3);
  });

  it('answers 400 with a google.rpc.Status for a body that does not decode', async () => {
    const postLogs = (body: Uint8Array | string, type: string, extra: Record<string, string> = {}) =>
      post(logsUrl(), { headers: { ...headers, 'content-type': type, ...extra }, body });
    const json = await postLogs('{"resourceLogs": [', 'application/json');
    assert.equal(json.status, 400);
    assert.deepEqual(await json.json(), { code: 3, message: 'The body is not valid JSON' });
    const shape = await postLogs('{"resourceLogs": {"not": "a list"}}', 'application/json');
    assert.equal(shape.status, 400);
    assert.deepEqual(await shape.json(), { code: 3, message: 'The body is not an OTLP JSON request (not a list)' });
    const garbage = await postLogs(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), 'application/x-protobuf');
    assert.equal(garbage.status, 400);
    assert.equal(garbage.headers.get('content-type'), 'application/x-protobuf');
    const message = 'The body is not a protobuf-encoded request (truncated field)';
    assert.deepEqual(Buffer.from(await garbage.arrayBuffer()), Buffer.concat([Buffer.from([0x08, 3, 0x12, message.length]), Buffer.from(message)]));
    const gzip = await postLogs(new Uint8Array([0x1f, 0x8b, 1, 2, 3]), 'application/x-protobuf', { 'content-encoding': 'gzip' });
    assert.equal(gzip.status, 400);
    const traces = await post(tracesUrl(), { headers: { ...headers, 'content-type': 'application/json' }, body: '[1, 2]' });
    assert.equal(traces.status, 400);
    assert.deepEqual(await traces.json(), { code: 3, message: 'The body is not an OTLP JSON request (not an object)' });
  });

  it('answers 200 with partial_success for the log records it cannot read, and takes the others', async () => {
    const body = {
      resourceLogs: [{
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'api' } }] },
        scopeLogs: [{ logRecords: [
          { severityNumber: 'ERROR', body: { stringValue: 'bad severity' } },
          { severityNumber: 21, timeUnixNano: 1796277600000000000, body: { stringValue: 'kernel panic' }, traceId: '5B8EFFF798038103D269B633813FC60C', unknownField: 1 },
          { traceId: 'not hex', body: { stringValue: 'bad trace id' } },
        ] }],
      }],
    };
    const response = await post(logsUrl(), { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { partialSuccess: { rejectedLogRecords: '2', errorMessage: '2 log records could not be read' } });
    assert.deepEqual(lastAccepted().records.map((r) => [r.program, r.severity, r.message, r.timestamp?.toISOString(), r.fields['trace_id']]), [
      ['api', 2, 'kernel panic', '2026-12-03T06:00:00.000Z', '5b8efff798038103d269b633813fc60c'],
    ]);

    // Protobuf: the second of two log records breaks the wire format (severity_number sent as a fixed64).
    const good = Buffer.from([0x10, 17, 0x2a, 0x04, 0x0a, 0x02, 0x68, 0x69]); // severity_number 17, body "hi"
    const bad = Buffer.from([0x11, 0x01]);
    const lengthDelimited = (field: number, payload: Buffer) => Buffer.concat([Buffer.from([field * 8 + 2, payload.length]), payload]);
    const request = lengthDelimited(1, lengthDelimited(2, Buffer.concat([lengthDelimited(2, good), lengthDelimited(2, bad)])));
    const proto = await post(logsUrl(), { headers: { ...headers, 'content-type': 'application/x-protobuf' }, body: request });
    assert.equal(proto.status, 200);
    const message = '1 log record could not be read';
    assert.deepEqual(Buffer.from(await proto.arrayBuffer()), lengthDelimited(1, Buffer.concat([Buffer.from([0x08, 1]), lengthDelimited(2, Buffer.from(message))])));
    assert.deepEqual(lastAccepted().records.map((r) => [r.severity, r.message]), [[3, 'hi']]);
  });

  it('passes the records accept refuses on as partial_success, which the exporter reports', async () => {
    const warnings: string[] = [];
    const logger: DiagLogger = {
      error: () => undefined, info: () => undefined, debug: () => undefined, verbose: () => undefined,
      warn: (message: string, ...args: unknown[]) => { warnings.push([message, ...args].join(' ')); },
    };
    diag.setLogger(logger, DiagLogLevel.WARN);
    mode = 'refuse-one';
    try {
      const proto = await send(new ProtoLogExporter({ url: logsUrl(), headers }), sdkLogs());
      assert.equal(proto.code, ExportResultCode.SUCCESS);
      const json = await send(new JsonLogExporter({ url: logsUrl(), headers }), sdkLogs());
      assert.equal(json.code, ExportResultCode.SUCCESS);
    } finally {
      mode = 'take';
      diag.disable();
    }
    const partial = warnings.filter((line) => line.startsWith('Received Partial Success response:'));
    assert.equal(partial.length, 2, warnings.join('\n'));
    assert.match(partial[0]!, /"rejectedLogRecords":"?1"?,"errorMessage":"1 record refused by cmi"/);
    assert.match(partial[1]!, /"rejectedLogRecords":"1","errorMessage":"1 record refused by cmi"/);
  });

  it('answers 429 and 503 with Retry-After when accept throttles, 415 for another content type, 413 past the limits', async () => {
    const postLogs = (type: string, body: Uint8Array | string = '{}', extra: Record<string, string> = {}) =>
      post(logsUrl(), { headers: { ...headers, 'content-type': type, ...extra }, body });
    mode = 'throttle-429';
    try {
      const throttled = await postLogs('application/json');
      assert.equal(throttled.status, 429);
      assert.equal(throttled.headers.get('retry-after'), '7');
      assert.deepEqual(await throttled.json(), { code: 8, message: 'Too many records, try again later' });
      mode = 'throttle-503';
      const unavailable = await postLogs('application/x-protobuf', new Uint8Array());
      assert.equal(unavailable.status, 503);
      assert.equal(unavailable.headers.get('retry-after'), '30');
      assert.equal(unavailable.headers.get('content-type'), 'application/x-protobuf');
    } finally {
      mode = 'take';
    }
    const text = await postLogs('text/plain', 'disk failed');
    assert.equal(text.status, 415);
    assert.deepEqual(await text.json(), { code: 3, message: 'Content-Type must be application/x-protobuf or application/json' });
    const brotli = await postLogs('application/json', '{}', { 'content-encoding': 'br' });
    assert.equal(brotli.status, 415);
    const bomb = await postLogs('application/json', gzipSync(Buffer.alloc(17 * 1024 * 1024, 0x20)), { 'content-encoding': 'gzip' });
    assert.equal(bomb.status, 413);
    assert.deepEqual(await bomb.json(), { code: 8, message: `The body is larger than ${16 * 1024 * 1024} bytes once decompressed` });
    const large = await postLogs('application/json', Buffer.alloc(4 * 1024 * 1024 + 1, 0x20));
    assert.equal(large.status, 413);
  });

  it('keeps every input bounded: a long body cut and marked, at most MAX_FIELDS fields, values nested too deep rejected, records past the limit rejected', async () => {
    const longBody = 'x'.repeat(70 * 1024);
    const attributes = Array.from({ length: 100 }, (_, i) => ({ key: `a${String(i).padStart(3, '0')}`, value: { stringValue: 'v'.repeat(2000) } }));
    let deep: unknown = { stringValue: 'bottom' };
    for (let i = 0; i < 20; i += 1) deep = { arrayValue: { values: [deep] } };
    const records = [
      { severityNumber: 17, body: { stringValue: longBody }, attributes },
      { severityNumber: 17, body: deep },
      ...Array.from({ length: 9_999 }, () => ({ severityNumber: 9 })),
    ];
    const response = await post(logsUrl(), {
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: records }] }] }),
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      partialSuccess: { rejectedLogRecords: '2', errorMessage: '1 log record could not be read; 1 log record past the limit of 10000 per request' },
    });
    const taken = lastAccepted().records;
    assert.equal(taken.length, 9_999);
    const first = taken[0]!;
    const messageBytes = Buffer.byteLength(first.message);
    assert.ok(messageBytes <= 64 * 1024 && messageBytes > 64 * 1024 - 64, String(messageBytes));
    assert.match(first.message, /^x+… \[truncated: \d+ more bytes\]$/);
    assert.equal(Object.keys(first.fields).length, 64);
    const longest = Math.max(...Object.values(first.fields).map((value) => Buffer.byteLength(value)));
    assert.ok(longest <= 1024, `a field of ${longest} bytes`);
    const rawBytes = Buffer.byteLength(first.raw);
    assert.ok(rawBytes <= 64 * 1024, `raw is ${rawBytes} bytes`);
  });

  it('checks the bearer token before reading the body: a bad token with a body past the limit is 401, not 413', async () => {
    const response = await post(logsUrl(), {
      headers: { authorization: 'Bearer wrong', 'content-type': 'application/x-protobuf' },
      body: Buffer.alloc(5 * 1024 * 1024),
    });
    assert.equal(response.status, 401);
    await response.arrayBuffer();
  });

  it('counts every request received, every record taken, and what it dropped by reason, exactly', () => {
    // 26 requests in the tests above; records taken: 2 + 4 + 2 + 2 + 2 + (4 - 2 refused) + 9,999.
    assert.deepEqual(counters, {
      received: 26,
      records: 10_013,
      dropped: { unauthenticated: 4, unsupported_media_type: 2, too_large: 2, undecodable: 5, throttled: 2, unreadable_record: 4, too_many_records: 1, rejected: 2 },
    });
  });
});
