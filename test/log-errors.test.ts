import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reportOfRecord, verdictOf } from '../src/logs/log-errors.js';
import type { LogRecord } from '../src/logs/log-record.js';

// Which log records are errors, and the report each makes (docs/log-sources.md#which-lines-are-errors,
// docs/error-grouping.md#log-records).

const NOW = new Date('2026-11-20T10:00:00.000Z');
const KEY = { id: 7, component: null };

const record = (fields: Partial<LogRecord>): LogRecord => ({
  source: 'syslog', host: 'hv-07', program: 'libvirtd', severity: 3, message: 'internal error: process exited while connecting to monitor', timestamp: new Date('2026-11-20T09:59:58.000Z'),
  fields: {}, raw: '<27>1 2026-11-20T09:59:58Z hv-07 libvirtd 4242 - - internal error: process exited while connecting to monitor', ...fields,
});

describe('which log records are errors', () => {
  it('a record at the key\'s threshold or worse is; one less severe is not', () => {
    assert.deepEqual(verdictOf(record({ severity: 3 }), 3), { rule: undefined, component: undefined });
    assert.deepEqual(verdictOf(record({ severity: 0 }), 3), { rule: undefined, component: undefined });
    assert.equal(verdictOf(record({ severity: 4 }), 3), undefined);
    assert.deepEqual(verdictOf(record({ severity: 4 }), 4), { rule: undefined, component: undefined });
  });

  it('the shipped rules promote known failures at any severity, a unit\'s failure for the unit itself', () => {
    const cases: Array<[string, string, string, string | undefined]> = [
      ['kernel', 'Out of memory: Killed process 31337 (qemu-system-x86) total-vm:8388608kB', 'kernel: out of memory', undefined],
      ['kernel', 'qemu-kvm[2211]: segfault at 0 ip 00007f3c sp 00007ffd error 4 in libc.so.6', 'kernel: segfault', undefined],
      ['kernel', 'INFO: task iscsid:812 blocked for more than 120 seconds.', 'kernel: hung task', undefined],
      ['kernel', 'mce: [Hardware Error]: Machine check events logged', 'kernel: machine check', undefined],
      ['kernel', 'blk_update_request: I/O error, dev sdb, sector 2048 op 0x0:(READ)', 'kernel: I/O error', undefined],
      ['systemd', "nova-compute.service: Failed with result 'exit-code'.", 'systemd: unit failed', 'nova-compute.service'],
      ['systemd', 'ovs-vswitchd.service: Main process exited, code=killed, status=11/SEGV', 'systemd: unit failed', 'ovs-vswitchd.service'],
    ];
    for (const [program, message, errorClass, component] of cases) {
      const verdict = verdictOf(record({ program, message, severity: 6 }), 3);
      assert.equal(verdict?.rule?.error_class, errorClass, message);
      assert.equal(verdict?.component, component, message);
    }
    // A unit that exited cleanly, or the same words from another program, are not promoted.
    assert.equal(verdictOf(record({ program: 'systemd', message: 'cron.service: Main process exited, code=exited, status=0/SUCCESS', severity: 6 }), 3), undefined);
    assert.equal(verdictOf(record({ program: 'myapp', message: 'Out of memory: Killed process 1', severity: 6 }), 3), undefined);
  });
});

describe('the report a log record makes', () => {
  it('is the program and severity as class, the line as message and backtrace, the key\'s or the program\'s component', () => {
    const report = reportOfRecord(record({ fields: { 'syslog.facility': 'daemon', 'meta.sequenceId': '12' } }), { rule: undefined, component: undefined }, KEY, '192.0.2.10', NOW);
    assert.deepEqual({ ...report, fingerprint: report.fingerprint.length }, {
      fingerprint: 64,
      error_class: 'libvirtd: err',
      message: 'internal error: process exited while connecting to monitor',
      backtrace: 'internal error: process exited while connecting to monitor',
      occurred_at: new Date('2026-11-20T09:59:58.000Z'),
      count: 1,
      host: 'hv-07',
      component: 'libvirtd',
      request_id: null,
      context: JSON.stringify({
        source: 'syslog', severity: 'err', program: 'libvirtd', fields: { 'syslog.facility': 'daemon', 'meta.sequenceId': '12' },
        raw: '<27>1 2026-11-20T09:59:58Z hv-07 libvirtd 4242 - - internal error: process exited while connecting to monitor',
      }),
    });
    assert.equal(reportOfRecord(record({}), { rule: undefined, component: undefined }, { id: 7, component: 'compute' }, undefined, NOW).component, 'compute');
    assert.equal(reportOfRecord(record({ host: undefined }), { rule: undefined, component: undefined }, KEY, '192.0.2.10', NOW).host, '192.0.2.10');
  });

  it('groups one fault logged with varying numbers and addresses as one error, another program\'s as another', () => {
    const verdict = { rule: undefined, component: undefined };
    const a = reportOfRecord(record({ message: 'failed to connect to 10.0.0.5:16509 after 3 tries (pid 4242)' }), verdict, KEY, undefined, NOW);
    const b = reportOfRecord(record({ host: 'hv-31', message: 'failed to connect to 10.0.8.77:16509 after 15 tries (pid 99)' }), verdict, KEY, undefined, NOW);
    const c = reportOfRecord(record({ program: 'nova-compute', message: 'failed to connect to 10.0.0.5:16509 after 3 tries (pid 4242)' }), verdict, KEY, undefined, NOW);
    assert.equal(a.fingerprint, b.fingerprint);
    assert.notEqual(a.fingerprint, c.fingerprint);
  });

  it('takes an exception\'s type, message and stack; a journal entry\'s cursor makes it counted once; a time far ahead is now', () => {
    const report = reportOfRecord(record({
      source: 'otlp', program: 'billing', severity: 3, message: 'charge failed', timestamp: new Date('2026-11-21T00:00:00.000Z'),
      exception: { type: 'ConnectionRefusedError', message: 'connect ECONNREFUSED 10.1.1.1:5432', stacktrace: 'ConnectionRefusedError: connect ECONNREFUSED\n    at charge (billing.js:10:5)' },
    }), { rule: undefined, component: undefined }, KEY, undefined, NOW);
    assert.deepEqual([report.error_class, report.message, report.backtrace, report.occurred_at], ['ConnectionRefusedError', 'connect ECONNREFUSED 10.1.1.1:5432', 'ConnectionRefusedError: connect ECONNREFUSED\n    at charge (billing.js:10:5)', NOW]);
    const journal = reportOfRecord(record({ source: 'journald', cursor: 's=abc;i=1f;b=d1;m=2a;t=5f;x=9' }), { rule: undefined, component: undefined }, KEY, undefined, NOW);
    assert.match(journal.event_key ?? '', /^7:journal:[0-9a-f]{32}$/);
    assert.equal(reportOfRecord(record({}), { rule: undefined, component: undefined }, KEY, undefined, NOW).event_key, undefined);
  });

  it('keeps its context within the tracker\'s 16,384 bytes however many and large the fields', () => {
    const fields = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`FIELD_${i}`, 'x'.repeat(1024)]));
    const report = reportOfRecord(record({ fields, raw: 'y'.repeat(65_536) }), { rule: undefined, component: undefined }, KEY, undefined, NOW);
    assert.ok(Buffer.byteLength(report.context ?? '') <= 16_384, String(Buffer.byteLength(report.context ?? '')));
    const context = JSON.parse(report.context ?? '{}') as { fields: Record<string, string> };
    assert.equal(context.fields.FIELD_0, 'x'.repeat(1024));
  });
});
