import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, type ReadableLogRecord, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';
import { startServer } from './support/cli.js';
import { eventually } from './support/eventually.js';
import { appendToJournal, entry, run, UPLOAD } from './support/journal.js';
import { freePort } from './support/throwaway-postgres.js';

/**
 * The log sources wired into cmi (docs/log-sources.md): ingest keys of each kind, the real senders
 * (OpenTelemetry's exporter, systemd-journal-upload, logger) to a listening app, the errors they
 * become, the sources counted, what is refused, and `cmi serve` starting the syslog listeners.
 */

const KEYS = '/sysadmin_tools/infrastructure/ingest_keys.json';
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

interface Key { id: number; public_key: string }

let t: TestApp;
let base: string;
let dir: string;

before(async () => {
  t = await createTestApp({ CMI_METRICS_TOKEN: METRICS_TOKEN }, { ingestUsageFlushMs: 3_600_000 });
  base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  dir = mkdtempSync(join(tmpdir(), 'cmi-log-ingestion-'));
});
after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

async function makeKey(fields: Record<string, unknown>): Promise<Key> {
  const made = await t.app.inject({ method: 'POST', url: KEYS, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: JSON.stringify({ ingest_key: fields }) });
  assert.equal(made.statusCode, 201, made.body);
  return (JSON.parse(made.body) as { ingest_key: Key }).ingest_key;
}

async function changeKey(id: number, fields: Record<string, unknown>): Promise<void> {
  const changed = await t.app.inject({ method: 'PUT', url: `/sysadmin_tools/infrastructure/ingest_keys/${id}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: JSON.stringify({ ingest_key: fields }) });
  assert.equal(changed.statusCode, 204, changed.body);
}

interface ErrorRow { error_class: string; message: string; host: string | null; component: string | null; counter: number }

const api = async (url: string): Promise<unknown> => {
  const answer = await t.app.inject({ method: 'GET', url, headers: { authorization: t.adminAuth } });
  assert.equal(answer.statusCode, 200, answer.body);
  return JSON.parse(answer.body);
};

/** The errors cmi holds, by class, each with the host and component of its occurrences (all alike here), as the API lists them. */
async function errors(): Promise<ErrorRow[]> {
  const listed = await api('/sysadmin_tools/infrastructure/errors.json?per_page=100') as Array<{ infrastructure_error: { id: number; error_class: string; message: string; counter: number } }>;
  const rows: ErrorRow[] = [];
  for (const { infrastructure_error: e } of listed) {
    const occurrences = await api(`/sysadmin_tools/infrastructure/errors/${e.id}/occurrences.json`) as Array<{ occurrence: { host: string | null; component: string | null } }>;
    const places = new Set(occurrences.map(({ occurrence }) => JSON.stringify([occurrence.host, occurrence.component])));
    assert.equal(places.size, 1, `${e.error_class}: ${[...places].join(' ')}`);
    const [host, component] = JSON.parse([...places][0]!) as [string | null, string | null];
    rows.push({ error_class: e.error_class, message: e.message, host, component, counter: e.counter });
  }
  return rows.sort((a, b) => (a.error_class < b.error_class ? -1 : a.error_class > b.error_class ? 1 : 0));
}

/** The sources table's rows for `host` (flushed first). */
async function sourcesOf(host: string): Promise<Array<{ program: string; lines: number; errors: number; key_id: number | null }>> {
  await t.app.logSources.ingestion.flush();
  const rows = await t.database.db.selectFrom('log_sources').select(['program', 'lines', 'errors', 'key_id']).where('host', '=', host).orderBy('program').execute();
  return rows.map((row) => ({ program: row.program, lines: Number(row.lines), errors: Number(row.errors), key_id: row.key_id === null ? null : Number(row.key_id) }));
}

function sdkLogs(host: string, records: Array<{ severity: SeverityNumber; body: string }>): ReadableLogRecord[] {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': 'billing', 'host.name': host }), processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
  const logger = provider.getLogger('cmi-test');
  for (const { severity, body } of records) logger.emit({ severityNumber: severity, body, timestamp: new Date('2026-11-20T09:59:00.000Z') });
  return memory.getFinishedLogRecords();
}

function exportLogs(token: string, records: ReadableLogRecord[]): Promise<ExportResult> {
  const exporter = new OTLPLogExporter({ url: `${base}/v1/logs`, headers: { Authorization: `Bearer ${token}` } });
  return new Promise((resolve) => exporter.export(records, (result) => void exporter.shutdown().then(() => resolve(result))));
}

const postLogs = (token: string | undefined, body: string) => fetch(`${base}/v1/logs`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
  body,
  signal: AbortSignal.timeout(10_000),
});
const ONE_ERROR = JSON.stringify({ resourceLogs: [{ resource: { attributes: [{ key: 'host.name', value: { stringValue: 'hv-9' } }] }, scopeLogs: [{ logRecords: [{ severityNumber: 17, body: { stringValue: 'boom' } }] }] }] });

describe('OpenTelemetry into cmi', () => {
  let key: Key;
  before(async () => {
    key = await makeKey({ label: 'Billing services', kind: 'otlp', component: 'billing-otel' });
  });

  it('records the ERROR record the real exporter sends as an error of the key\'s component and host, and counts both records on the source', async () => {
    const result = await exportLogs(key.public_key, sdkLogs('hv-7', [{ severity: SeverityNumber.ERROR, body: 'invoice run failed: timeout' }, { severity: SeverityNumber.INFO, body: 'invoice run started' }]));
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    const recorded = (await errors()).filter((error) => error.host === 'hv-7');
    assert.deepEqual(recorded, [{ error_class: 'billing: err', message: 'invoice run failed: timeout', host: 'hv-7', component: 'billing-otel', counter: 1 }]);
    assert.deepEqual(await sourcesOf('hv-7'), [{ program: 'billing', lines: 2, errors: 1, key_id: key.id }]);
  });

  it('refuses a token that is no OTLP key, a disabled key at once, and a key whose networks do not cover the sender, recording nothing', async () => {
    const before = await errors();
    const refusal = '{"code":16,"message":"The bearer token is not a valid OTLP ingest key"}';
    const stranger = await postLogs('0123456789abcdef0123456789abcdef', ONE_ERROR);
    assert.equal(stranger.status, 401);
    assert.equal(await stranger.text(), refusal);
    const none = await postLogs(undefined, ONE_ERROR);
    assert.equal(none.status, 401);
    assert.equal(await none.text(), '{"code":16,"message":"An Authorization: Bearer header with an OTLP ingest key is required"}');
    // A Sentry key's public key is no OTLP key.
    const sentry = await makeKey({ label: 'An SDK' });
    assert.equal((await postLogs(sentry.public_key, ONE_ERROR)).status, 401);

    const other = await makeKey({ label: 'Elsewhere', kind: 'otlp', allowed_networks: '10.0.0.0/8' });
    const outside = await postLogs(other.public_key, ONE_ERROR);
    assert.equal(outside.status, 401);
    assert.equal(await outside.text(), refusal);
    await changeKey(other.id, { allowed_networks: '127.0.0.0/8' });
    assert.equal((await postLogs(other.public_key, ONE_ERROR)).status, 200);
    await changeKey(other.id, { enabled: false });
    assert.equal((await postLogs(other.public_key, ONE_ERROR)).status, 401);
    const after = await errors();
    assert.deepEqual(after.filter((error) => error.host === 'hv-9'), [{ error_class: 'unknown: err', message: 'boom', host: 'hv-9', component: 'unknown', counter: 1 }]);
    assert.equal(after.length, before.length + 1);
  });

  it('answers 429 with Retry-After, recording none of a request and spending no token, when the key\'s rate limit has not room for all its errors; more than a minute\'s worth passes once it is whole', async () => {
    const limited = await makeKey({ label: 'Tiny', kind: 'otlp', rate_limit_per_minute: 2 });
    const failures = (host: string, count: number) => JSON.stringify({ resourceLogs: [{ resource: { attributes: [{ key: 'host.name', value: { stringValue: host } }, { key: 'service.name', value: { stringValue: host } }] }, scopeLogs: [{ logRecords: Array.from({ length: count }, (_, n) => ({ severityNumber: 17, body: { stringValue: `failure ${n}` } })) }] }] });
    const counted = async (host: string) => (await errors()).filter((error) => error.host === host).map((error) => error.counter);
    assert.equal((await postLogs(limited.public_key, failures('hv-limit-1', 1))).status, 200);
    // One token left: two errors do not fit.
    const refused = await postLogs(limited.public_key, failures('hv-limit-2', 2));
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '30');
    assert.equal(await refused.text(), '{"code":8,"message":"Rate limit of the ingest key exceeded, try again later"}');
    assert.deepEqual(await counted('hv-limit-2'), []);
    // The refusal spent nothing: the token left takes one more.
    assert.equal((await postLogs(limited.public_key, failures('hv-limit-3', 1))).status, 200);
    // Three errors, more than the two a minute holds: they pass once the allowance is whole, and the key then owes one.
    t.time.advance(60);
    assert.equal((await postLogs(limited.public_key, failures('hv-limit-4', 3))).status, 200);
    assert.deepEqual(await counted('hv-limit-4'), [3]);
    const owing = await postLogs(limited.public_key, failures('hv-limit-5', 1));
    assert.deepEqual([owing.status, owing.headers.get('retry-after')], [429, '60']);
  });
});

describe('systemd-journal-upload into cmi', () => {
  it('records a journal\'s error entries once, even as the uploader sends its last entry again from its saved cursor', async () => {
    const key = await makeKey({ label: 'Hypervisors', kind: 'journald' });
    const journal = join(dir, 'system.journal');
    const state = join(dir, 'upload-state');
    await appendToJournal(journal, [
      entry(0, [['_HOSTNAME', 'hv-j1'], ['SYSLOG_IDENTIFIER', 'libvirtd'], ['PRIORITY', '3'], ['MESSAGE', 'internal error: qemu unexpectedly closed the monitor']]),
      entry(1, [['_HOSTNAME', 'hv-j1'], ['SYSLOG_IDENTIFIER', 'libvirtd'], ['PRIORITY', '6'], ['MESSAGE', 'domain started']]),
    ]);
    const upload = () => run(UPLOAD, ['--follow=no', `--file=${journal}`, `--url=${base}/api/${key.id}/journal/${key.public_key}`, `--save-state=${state}`]);
    const first = await upload();
    assert.equal(first.code, 0, first.stderr);
    await appendToJournal(journal, [entry(2, [['_HOSTNAME', 'hv-j1'], ['SYSLOG_IDENTIFIER', 'libvirtd'], ['PRIORITY', '3'], ['MESSAGE', 'internal error: qemu unexpectedly closed the monitor']])]);
    const second = await upload();
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual((await errors()).filter((error) => error.host === 'hv-j1'), [
      { error_class: 'libvirtd: err', message: 'internal error: qemu unexpectedly closed the monitor', host: 'hv-j1', component: 'libvirtd', counter: 2 },
    ]);
    // Three entries on the source: the one sent again is not counted twice.
    assert.deepEqual(await sourcesOf('hv-j1'), [{ program: 'libvirtd', lines: 3, errors: 2, key_id: key.id }]);

    const wrong = await run(UPLOAD, ['--follow=no', `--file=${journal}`, `--url=${base}/api/${key.id}/journal/${'0'.repeat(32)}`, `--save-state=${join(dir, 'other-state')}`]);
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /failed with code 401: This URL names no ingest key that may upload a journal\./);
  });
});

describe('syslog into cmi', () => {
  it('records an err line logger sends from an allowed network, counts a lower one on its source, and drops a stranger\'s', async () => {
    const key = await makeKey({ label: 'Rack 12', kind: 'syslog', allowed_networks: '127.0.0.1/32', component: 'rack-12' });
    const listeners = await t.app.logSources.listenSyslog(['tcp://127.0.0.1:0'], undefined);
    const port = listeners!.addresses()[0]!.port;
    const logger = (priority: string, message: string) => run('logger', ['--server', '127.0.0.1', '--port', String(port), '--tcp', '--octet-count', '--rfc5424', '-t', 'libvirtd', '-p', priority, message]);
    assert.equal((await logger('daemon.err', 'qemu failed to start vm-7')).code, 0);
    assert.equal((await logger('daemon.info', 'vm-7 defined')).code, 0);
    const host = (await eventually(async () => {
      await t.app.logSources.ingestion.syslogDrained();
      const found = (await errors()).find((error) => error.message === 'qemu failed to start vm-7');
      assert.ok(found, 'the error is recorded');
      return found;
    })).host!;
    assert.deepEqual((await errors()).filter((error) => error.message === 'qemu failed to start vm-7'), [{ error_class: 'libvirtd: err', message: 'qemu failed to start vm-7', host, component: 'rack-12', counter: 1 }]);
    await eventually(async () => assert.deepEqual(await sourcesOf(host), [{ program: 'libvirtd', lines: 2, errors: 1, key_id: key.id }]));

    // The key narrowed to another network: the next line is nobody's, dropped and counted.
    await changeKey(key.id, { allowed_networks: '192.0.2.0/24' });
    const unauthenticated = t.app.logSources.counts().dropped.find((drop) => drop.source === 'syslog' && drop.reason === 'unauthenticated')!.count;
    assert.equal((await logger('daemon.err', 'nobody may send this')).code, 0);
    await eventually(async () => {
      await t.app.logSources.ingestion.syslogDrained();
      assert.equal(t.app.logSources.counts().dropped.find((drop) => drop.source === 'syslog' && drop.reason === 'unauthenticated')!.count, unauthenticated + 1);
    });
    assert.equal((await errors()).some((error) => error.message === 'nobody may send this'), false);
  });

  it('/metrics counts what each source read and dropped', async () => {
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(metrics.statusCode, 200);
    const sample = (name: string) => new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)$`, 'm').exec(metrics.body)?.[1];
    // The third line's connection was closed before it was read: no key admitted its sender.
    assert.equal(sample('cmi_log_records_total{source="syslog"}'), '2');
    // Two entries, then the last of them again with the new one.
    assert.equal(sample('cmi_log_records_total{source="journald"}'), '4');
    assert.equal(sample('cmi_log_dropped_total{source="syslog",reason="unauthenticated"}'), '1');
    assert.equal(sample('cmi_log_dropped_total{source="otlp",reason="unauthenticated"}'), '5');
    assert.match(metrics.body, /^cmi_log_records_judged_total\{verdict="error"\} \d+$/m);
  });
  it('drops UDP lines of a sender known to be nobody\'s before they queue, and takes them once a key admits it', async () => {
    const key = await makeKey({ label: 'Rack 14', kind: 'syslog', allowed_networks: '192.0.2.0/24' });
    const udp = await t.app.logSources.listenSyslog(['udp://127.0.0.1:0'], undefined);
    const port = udp!.addresses()[0]!.port;
    const udpLine = (message: string) => run('logger', ['--server', '127.0.0.1', '--port', String(port), '--udp', '--rfc5424', '-t', 'nova-api', '-p', 'daemon.err', message]);
    const refusedBefore = t.app.logSources.ingestion.counters.unauthenticated;
    assert.equal((await udpLine('udp from nobody')).code, 0);
    await eventually(async () => {
      await t.app.logSources.ingestion.syslogDrained();
      assert.equal(t.app.logSources.ingestion.counters.unauthenticated, refusedBefore + 1);
    });
    await changeKey(key.id, { allowed_networks: '127.0.0.1/32' });
    await eventually(async () => {
      assert.equal((await udpLine('udp admitted again')).code, 0);
      await t.app.logSources.ingestion.syslogDrained();
      assert.ok((await errors()).some((error) => error.message === 'udp admitted again'), 'the line is recorded once the key admits its sender');
    }, 5000, 150);
  });
});

describe('cmi serve with CMI_SYSLOG_LISTEN', () => {
  it('starts the listeners it names, says where, and records what arrives there', async () => {
    const port = await freePort();
    const server = await startServer({ DATABASE_URL: `sqlite://${join(dir, 'serve.db')}`, CMI_ADMIN_PASSWORD: 'admin-password', CMI_SYSLOG_LISTEN: `udp://127.0.0.1:${port}` });
    try {
      assert.match(server.output, new RegExp(`^Syslog: udp://127\\.0\\.0\\.1:${port}$`, 'm'));
      const auth = `Basic ${Buffer.from('admin:admin-password').toString('base64')}`;
      const made = await fetch(`${server.baseUrl}${KEYS}`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ ingest_key: { label: 'Local', kind: 'syslog', allowed_networks: '127.0.0.1' } }) });
      assert.equal(made.status, 201);
      assert.equal((await run('logger', ['--server', '127.0.0.1', '--port', String(port), '--udp', '--rfc3164', '-t', 'nova-compute', '-p', 'daemon.crit', 'instance vm-3 lost'])).code, 0);
      await eventually(async () => {
        const listed = await fetch(`${server.baseUrl}/sysadmin_tools/infrastructure/errors.json`, { headers: { authorization: auth } });
        const body = (await listed.json()) as Array<{ infrastructure_error: { error_class: string; message: string; counter: number } }>;
        assert.deepEqual(body.map(({ infrastructure_error: e }) => [e.error_class, e.message, e.counter]), [['nova-compute: crit', 'instance vm-3 lost', 1]]);
      }, 10_000, 100);
    } finally {
      await server.stop();
    }
  });

  it('refuses to start on a listener spec it cannot read, naming the setting', async () => {
    await assert.rejects(startServer({ DATABASE_URL: `sqlite://${join(dir, 'refused.db')}`, CMI_SYSLOG_LISTEN: 'syslog://0.0.0.0:514' }), /CMI_SYSLOG_LISTEN: The syslog listener "syslog:\/\/0\.0\.0\.0:514" is not udp:\/\/HOST:PORT, tcp:\/\/HOST:PORT or tls:\/\/HOST:PORT\./);
  });
});
