import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { journalExportParser } from '../src/logs/journal-export.js';
import type { LogRecord } from '../src/logs/log-record.js';
import { decodeOtlpLogs } from '../src/logs/otlp-decode.js';
import { FrameReader } from '../src/logs/syslog-listener.js';
import { parseSyslog } from '../src/logs/syslog-parse.js';
import { countFrames, type FrameCount, HOSTS, journalBody, MESSAGES, otlpBody, syslogLines } from '../tools/bench/log-payloads.js';

// What the log sources' benchmark sends (tools/bench/log-payloads.ts, docs/benchmarks.md#logs), read by cmi's own readers:
// the records and errors each payload says it holds are those cmi finds in it, and the reference server counts the same frames.

const NOW = new Date('2026-12-03T12:00:00.000Z');

/** What the benchmark's figures rest on: records, errors (severity err or worse), their hosts and messages. */
function tally(records: LogRecord[]) {
  const errors = records.filter((record) => record.severity <= 3);
  return { records: records.length, errors: errors.length, errorHosts: new Set(errors.map((r) => r.host)).size, errorMessages: new Set(errors.map((r) => r.message)).size };
}

describe('the log benchmark payloads', () => {
  it('syslog: 50,000 octet-counted RFC 5424 lines, 500 at err over every host and the 20 messages, as cmi frames and parses them', () => {
    const payload = syslogLines(0, 50_000, NOW.toISOString());
    assert.deepEqual([payload.records, payload.errors], [50_000, 500]);
    const records: LogRecord[] = [];
    const counters = { truncated: 0, dropped: { unparsable: 0, framing: 0, incomplete: 0, handshake: 0, client_certificate: 0, connection_limit: 0, unauthenticated: 0, idle_timeout: 0, sink_error: 0 } };
    const frames = new FrameReader((text) => records.push(parseSyslog(text, '127.0.0.1', NOW) as LogRecord), counters);
    // In chunks of 65,536 bytes, as a socket reads them: frames cut between chunks.
    for (let at = 0; at < payload.bytes.length; at += 65_536) {
      const chunk = payload.bytes.subarray(at, at + 65_536);
      assert.equal(frames.push(chunk), chunk.length);
    }
    assert.deepEqual(tally(records), { records: 50_000, errors: 500, errorHosts: HOSTS.length, errorMessages: MESSAGES.length });
    assert.equal(records.filter((record) => record.severity === 6).length, 49_500);
    assert.deepEqual(records[99], { ...records[99], host: 'hv-000', program: 'nova-compute', severity: 3, message: MESSAGES[0], timestamp: NOW });
    assert.equal(counters.truncated + Object.values(counters.dropped).reduce((a, b) => a + b, 0), 0);
  });

  it('the syslog reference counts the same frames, whatever the chunks', () => {
    const payload = syslogLines(7, 3_000, NOW.toISOString());
    for (const size of [1, 7, 4_096, payload.bytes.length]) {
      const state: FrameCount = { frames: 0, skip: 0, length: 0 };
      for (let at = 0; at < payload.bytes.length; at += size) countFrames(state, payload.bytes.subarray(at, at + size));
      assert.deepEqual(state, { frames: 3_000, skip: 0, length: 0 }, `chunks of ${size}`);
    }
  });

  it('journald: 1,000 entries in the export format, 10 at PRIORITY=3', async () => {
    const payload = journalBody(0, 1_000, 1_764_763_200_000_000);
    assert.deepEqual([payload.records, payload.errors], [1_000, 10]);
    const records: LogRecord[] = [];
    const parser = journalExportParser((record) => void records.push(record));
    await parser.push(payload.bytes);
    parser.end();
    assert.deepEqual(tally(records), { records: 1_000, errors: 10, errorHosts: 10, errorMessages: 10 });
    assert.deepEqual([records[99]?.host, records[99]?.program, records[99]?.cursor, records[99]?.timestamp], ['hv-000', 'nova-compute', undefined, new Date(1_764_763_200_000)]);
  });

  it('OTLP: a JSON export of 1,000 log records, 10 at severityNumber 17', () => {
    const payload = otlpBody(100, 1_000, 1_764_763_200_000_000_000n);
    assert.deepEqual([payload.records, payload.errors], [1_000, 10]);
    const decoded = decodeOtlpLogs(payload.bytes, 'json');
    assert.deepEqual([decoded.items, decoded.rejected], [1_000, {}]);
    assert.deepEqual(tally(decoded.records), { records: 1_000, errors: 10, errorHosts: 10, errorMessages: 10 });
    assert.deepEqual([decoded.records[99]?.host, decoded.records[99]?.program, decoded.records[99]?.message], ['hv-001', 'libvirtd', MESSAGES[1]]);
  });
});
