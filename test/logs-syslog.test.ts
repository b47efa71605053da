import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { boundedText, type LogRecord, MAX_FIELDS, MAX_LINE_BYTES } from '../src/logs/log-record.js';
import { FrameReader, parseListenSpec, type SyslogPeer, startSyslogListeners } from '../src/logs/syslog-listener.js';
import { FACILITY_NAMES, parseSyslog } from '../src/logs/syslog-parse.js';
import { eventually } from './support/eventually.js';
import { freePort } from './support/throwaway-postgres.js';

// docs/log-sources.md#syslog: parseSyslog against RFC 5424's and RFC 3164's examples and the forms the
// senders write; the listeners against the real senders, `logger` (bsdutils) and Debian's rsyslogd
// (omfwd over TCP, and TLS through gtls with and without a client certificate, a CA made by openssl),
// and against junk, oversize lines, a TLS handshake of junk and a flood of UDP.

const NOW = new Date('2026-12-03T07:00:00Z');
const parse = (line: string) => parseSyslog(line, '192.0.2.9', NOW);
const BOM = '\uFEFF';

/** A record as parseSyslog makes it, `fields` starting with the facility. */
function record(partial: Partial<LogRecord> & { raw: string }): LogRecord {
  return { source: 'syslog', host: undefined, program: undefined, severity: 6, message: '', timestamp: undefined, fields: {}, ...partial };
}

describe('parseSyslog: RFC 5424', () => {
  it("reads RFC 5424's example 1 (6.5): no structured data, a BOM before MSG", () => {
    const line = `<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - ${BOM}'su root' failed for lonvick on /dev/pts/8`;
    assert.deepEqual(parse(line), record({
      host: 'mymachine.example.com', program: 'su', severity: 2, message: "'su root' failed for lonvick on /dev/pts/8",
      timestamp: new Date('2003-10-11T22:14:15.003Z'), fields: { 'syslog.facility': 'auth', 'syslog.msgid': 'ID47' }, raw: line,
    }));
  });
  it("reads example 2: an offset, microseconds, no MSGID", () => {
    const line = "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.";
    assert.deepEqual(parse(line), record({
      host: '192.0.2.1', program: 'myproc', severity: 5, message: "%% It's time to make the do-nuts.",
      timestamp: new Date('2003-08-24T12:14:15.000Z'), fields: { 'syslog.facility': 'local4', 'syslog.procid': '8710' }, raw: line,
    }));
  });
  it('reads examples 3 and 4: structured data as sdid.param, with and without MSG', () => {
    const sd = '[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"]';
    const three = `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 ${sd} ${BOM}An application event log entry...`;
    const fields = { 'syslog.facility': 'local4', 'syslog.msgid': 'ID47', 'exampleSDID@32473.iut': '3', 'exampleSDID@32473.eventSource': 'Application', 'exampleSDID@32473.eventID': '1011' };
    const common = { host: 'mymachine.example.com', program: 'evntslog', severity: 5 as const, timestamp: new Date('2003-10-11T22:14:15.003Z') };
    assert.deepEqual(parse(three), record({ ...common, message: 'An application event log entry...', fields, raw: three }));
    const four = `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 ${sd}[examplePriority@32473 class="high"]`;
    assert.deepEqual(parse(four), record({ ...common, message: '', fields: { ...fields, 'examplePriority@32473.class': 'high' }, raw: four }));
  });
  it('unescapes \\", \\\\ and \\] in a value, and leaves any other backslash (6.3.3)', () => {
    const line = '<11>1 - - - - - [x@1 a="q\\"r\\]s\\\\t\\u" b=""] m';
    assert.deepEqual(parse(line)?.fields, { 'syslog.facility': 'user', 'x@1.a': 'q"r]s\\t\\u', 'x@1.b': '' });
  });
  it('takes every NILVALUE as nothing: the host is the sender then, the timestamp undefined', () => {
    assert.deepEqual(parse('<13>1 - - - - - -'), record({ host: '192.0.2.9', severity: 5, fields: { 'syslog.facility': 'user' }, raw: '<13>1 - - - - - -' }));
    assert.equal(parseSyslog('<13>1 - - - - - - m', '', NOW)?.host, undefined);
  });
  it('drops the LF (or CRLF) that ends a frame, keeps the rest of the MSG as it is', () => {
    assert.equal(parse('<13>1 - h a - - -  two  spaces \r\n')?.message, ' two  spaces ');
    assert.equal(parse('<13>1 - h a - - - line\nbreak\n')?.message, 'line\nbreak');
  });
  it('gives a timestamp that does not exist as undefined, the line still read', () => {
    assert.equal(parse('<13>1 2026-02-30T00:00:00Z h a - - - m')?.timestamp, undefined);
    assert.equal(parse('<13>1 2026-02-03 h a - - - m')?.timestamp, undefined);
    assert.equal(parse('<13>1 2026-02-03T10:00:00+25:00 h a - - - m')?.timestamp, undefined);
    assert.deepEqual(parse('<13>1 2024-02-29T23:59:59.9999Z h a - - - m')?.timestamp, new Date('2024-02-29T23:59:59.999Z'));
    assert.deepEqual(parse('<13>1 2000-02-29T00:00:00.5-00:30 h a - - - m')?.timestamp, new Date('2000-02-29T00:30:00.500Z'));
    for (const day of ['2026-02-29', '1900-02-29', '2026-04-31', '2026-13-01', '2026-00-10']) assert.equal(parse(`<13>1 ${day}T00:00:00Z h a - - - m`)?.timestamp, undefined, day);
    assert.equal(parse('<13>Feb 29 00:00:00 h a: m')?.timestamp, undefined, 'no 29 February in 2025, 2026 or 2027');
    assert.equal(parseSyslog('<13>Feb 29 00:00:00 h a: m', '', new Date('2028-01-15T00:00:00Z'))?.timestamp?.toISOString(), '2028-02-29T00:00:00.000Z');
  });
});

describe('parseSyslog: RFC 3164 and what senders write in its place', () => {
  it("reads RFC 3164's example (5.4), in the year nearest to now, as UTC", () => {
    const line = "<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8";
    assert.deepEqual(parse(line), record({
      host: 'mymachine', program: 'su', severity: 2, message: "'su root' failed for lonvick on /dev/pts/8",
      timestamp: new Date('2026-10-11T22:14:15Z'), fields: { 'syslog.facility': 'auth' }, raw: line,
    }));
    assert.deepEqual(parse('<13>Jan  2 00:00:01 h k: m')?.timestamp, new Date('2027-01-02T00:00:01Z'));
  });
  it('reads TAG[PID] without a HOSTNAME (a local sender), the sender then the host', () => {
    const line = '<30>Dec  3 06:53:40 libvirtd[4242]: internal error: qemu unexpectedly closed the monitor';
    assert.deepEqual(parse(line), record({
      host: '192.0.2.9', program: 'libvirtd', severity: 6, message: 'internal error: qemu unexpectedly closed the monitor',
      timestamp: new Date('2026-12-03T06:53:40Z'), fields: { 'syslog.facility': 'daemon', 'syslog.procid': '4242' }, raw: line,
    }));
  });
  it("reads an RFC 3339 timestamp in the BSD one's place (rsyslog's RSYSLOG_ForwardFormat)", () => {
    const line = '<3>2026-12-03T06:53:40.120+01:00 hv7 kernel: Out of memory: Killed process 1234 (qemu-system-x86)';
    assert.deepEqual(parse(line), record({
      host: 'hv7', program: 'kernel', severity: 3, message: 'Out of memory: Killed process 1234 (qemu-system-x86)',
      timestamp: new Date('2026-12-03T05:53:40.120Z'), fields: { 'syslog.facility': 'kern' }, raw: line,
    }));
  });
  it('reads a HOSTNAME and no TAG as an unknown program, and a TAG with no timestamp', () => {
    assert.deepEqual(parse('<14>Dec  3 06:53:40 sw1 link down on port 7'), record({
      host: 'sw1', severity: 6, message: 'link down on port 7', timestamp: new Date('2026-12-03T06:53:40Z'), fields: { 'syslog.facility': 'user' }, raw: '<14>Dec  3 06:53:40 sw1 link down on port 7',
    }));
    assert.deepEqual(parse('<11>Dec  3 06:53:40 hv7 nova-compute[3141] as rsyslog forwards it')?.program, 'nova-compute');
    assert.deepEqual(parse('<11>postfix/smtpd[77]: fatal: no space'), record({
      host: '192.0.2.9', program: 'postfix/smtpd', severity: 3, message: 'fatal: no space', fields: { 'syslog.facility': 'user', 'syslog.procid': '77' }, raw: '<11>postfix/smtpd[77]: fatal: no space',
    }));
  });
});

describe('parseSyslog: what is no syslog line, and bounds', () => {
  it('gives undefined for garbage', () => {
    const garbage = ['', 'junk', '<>', '<13', '<1000>1 - - - - - -', '<192>1 - - - - - -', '<13>hello world', '<13>1 - - - -',
      '<13>1 - - - - - [bad', '<13>1 - - - - - [a b="c"]x', '<13>1 - - - - - [a b="unterminated]', '<13>1 - - - - - [a b=c]',
      '<13>1 - - - - - [a="x"]', '<13>1 - - - - - [ b="x"]', '<13>1 - - - - - - x'.replace(' x', 'x'), '\u0000\u0001\u00ff<13>', ' <13>1 - - - - - -'];
    for (const line of garbage) assert.equal(parse(line), undefined, JSON.stringify(line));
  });
  it('takes severity as PRI & 7 and the facility as PRI >> 3, for each of the 192 values', () => {
    for (let pri = 0; pri <= 191; pri += 1) {
      const got = parse(`<${pri}>1 - h a - - - m`);
      assert.equal(got?.severity, pri & 7, `severity of ${pri}`);
      assert.equal(got?.fields['syslog.facility'], FACILITY_NAMES[pri >> 3], `facility of ${pri}`);
    }
  });
  it('never throws, for any mix of syslog-looking pieces', () => {
    let seed = 45;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const pieces = ['<', '>', '13', '1', ' ', '-', '[', ']', '"', '\\', '=', 'a', '@', 'Dec', '  3', '06:53:40', ':', '2026-12-03T06:53:40Z', '\uFEFF', '\n', '\u0000', 'é', '\uD800'];
    for (let i = 0; i < 5000; i += 1) {
      let line = random() < 0.8 ? '<13>' : '';
      const length = Math.floor(random() * 30);
      for (let j = 0; j < length; j += 1) line += pieces[Math.floor(random() * pieces.length)] as string;
      const got = parse(line);
      if (got) assert.ok(Buffer.byteLength(got.raw) <= MAX_LINE_BYTES, 'raw bounded');
    }
  });
  it('cuts a message and the raw line at MAX_LINE_BYTES, marked, as boundedText does', () => {
    const line = `<11>1 - h a - - - ${'é'.repeat(MAX_LINE_BYTES)}`;
    const got = parse(line);
    assert.equal(got?.raw, boundedText(line));
    assert.equal(got?.message, boundedText('é'.repeat(MAX_LINE_BYTES)));
    assert.match(got?.message ?? '', /… \[truncated: \d+ more bytes\]$/);
  });
  it('keeps at most MAX_FIELDS fields, each value bounded, repeated names joined, NUL replaced', () => {
    const params = Array.from({ length: 100 }, (_, i) => `p${i}="v"`).join(' ');
    assert.equal(Object.keys(parse(`<11>1 - h a - - [x ${params}] m`)?.fields ?? {}).length, MAX_FIELDS);
    const long = parse(`<11>1 - h a - - [x v="${'z'.repeat(5000)}" r="1" r="2"] nul\u0000here`);
    assert.ok((long?.fields['x.v']?.length ?? 0) <= 1024, 'a field value is bounded');
    assert.match(long?.fields['x.v'] ?? '', /truncated/);
    assert.equal(long?.fields['x.r'], '1, 2');
    assert.equal(long?.message, 'nul\uFFFDhere');
  });
});

describe('parseListenSpec and starting', () => {
  it('reads udp://, tcp:// and tls:// with a host and a port, IPv6 in brackets', () => {
    assert.deepEqual(parseListenSpec('udp://0.0.0.0:5514'), { transport: 'udp', host: '0.0.0.0', port: 5514 });
    assert.deepEqual(parseListenSpec('tls://[::]:6514'), { transport: 'tls', host: '::', port: 6514 });
    assert.deepEqual(parseListenSpec('tcp://localhost:0'), { transport: 'tcp', host: 'localhost', port: 0 });
    for (const spec of ['udp://0.0.0.0', 'http://h:1', 'tcp://h:70000', 'tcp://h:1/x', 'tcp://:1', 'tcp://user@h:1', '']) {
      assert.throws(() => parseListenSpec(spec), { message: `The syslog listener "${spec}" is not udp://HOST:PORT, tcp://HOST:PORT or tls://HOST:PORT.` });
    }
  });
  it('refuses tls:// without a certificate, and a taken port with why (closing what it started)', async () => {
    await assert.rejects(startSyslogListeners(['tls://127.0.0.1:0'], { onRecord: () => undefined }), { message: 'A tls:// syslog listener needs a certificate and its key (CMI_SYSLOG_TLS_CERT, CMI_SYSLOG_TLS_KEY).' });
    const first = await startSyslogListeners(['tcp://127.0.0.1:0'], { onRecord: () => undefined });
    try {
      const port = first.addresses()[0]?.port as number;
      await assert.rejects(startSyslogListeners(['udp://127.0.0.1:0', `tcp://127.0.0.1:${port}`], { onRecord: () => undefined }), { message: `The syslog listener tcp://127.0.0.1:${port} cannot listen: the port is taken.` });
    } finally {
      await first.close();
    }
  });
});

describe('FrameReader: RFC 6587 framing', () => {
  const read = (chunks: Buffer[]) => {
    const frames: string[] = [];
    const counters = { truncated: 0, dropped: { unparsable: 0, framing: 0, incomplete: 0, handshake: 0, client_certificate: 0, connection_limit: 0, unauthenticated: 0, idle_timeout: 0, sink_error: 0 } };
    const reader = new FrameReader((text) => frames.push(text), counters);
    const ok = chunks.map((chunk) => reader.push(chunk) === chunk.length);
    reader.end();
    return { frames, counters, ok, reader };
  };
  it('tells octet counting from LF frame by frame, in any chunking, one byte at a time included', () => {
    const stream = Buffer.from('11 <13>1 - - -\n<14>LF line\r\n\n5 <1>é<15>last');
    const expected = ['<13>1 - - -', '<14>LF line\r', '<1>é', '<15>last'];
    assert.deepEqual(read([stream]).frames, expected);
    assert.deepEqual(read([...stream].map((byte) => Buffer.from([byte]))).frames, expected);
    assert.deepEqual(read([stream.subarray(0, 17), stream.subarray(17)]).frames, expected);
  });
  it('refuses bytes that start neither framing, and a length not followed by SP or too long', () => {
    assert.deepEqual(read([Buffer.from('<13>ok\nGET / HTTP/1.1\r\n')]).ok, [false]);
    assert.deepEqual(read([Buffer.from('12x<13>')]).ok, [false]);
    assert.deepEqual(read([Buffer.from('0 ')]).ok, [false]);
    assert.deepEqual(read([Buffer.from('1234567890 <13>')]).ok, [false]);
  });
  it('stops after a frame once told it has read enough, and goes on from there', () => {
    const stream = Buffer.from('11 <13>1 - - -\n<14>second\n<15>third\n');
    const frames: string[] = [];
    const reader = new FrameReader((text) => frames.push(text), { truncated: 0, dropped: { unparsable: 0, framing: 0, incomplete: 0, handshake: 0, client_certificate: 0, connection_limit: 0, unauthenticated: 0, idle_timeout: 0, sink_error: 0 } });
    const stops: number[] = [];
    for (let at = 0; at < stream.length;) {
      at = reader.push(stream, at, () => true);
      stops.push(at);
    }
    assert.deepEqual(frames, ['<13>1 - - -', '<14>second', '<15>third']);
    // After the first frame (at its trailer), after the second; the third ends the chunk.
    assert.deepEqual(stops, [14, 26, stream.length]);
    assert.equal(reader.push(Buffer.from('<16>x\nGET /'), 0, () => false), -1);
  });
  it('counts an octet-counted frame cut short by the end of the connection', () => {
    const { frames, counters } = read([Buffer.from('50 <13>1 - - -')]);
    assert.deepEqual(frames, []);
    assert.equal(counters.dropped.incomplete, 1);
  });
  it('cuts an oversize frame as boundedText would, keeps no more than MAX_LINE_BYTES of it, and reads the next frame', () => {
    const line = `<11>1 - h a - - - ${'x'.repeat(3 * MAX_LINE_BYTES)}é`;
    const chunks: Buffer[] = [];
    const whole = Buffer.from(`${line}\n<12>next\n${Buffer.byteLength(line)} ${line}<13>after`);
    for (let at = 0; at < whole.length; at += 1000) chunks.push(whole.subarray(at, at + 1000));
    const frames: string[] = [];
    let largestKept = 0;
    const reader = new FrameReader((text) => frames.push(text), { truncated: 0, dropped: { unparsable: 0, framing: 0, incomplete: 0, handshake: 0, client_certificate: 0, connection_limit: 0, unauthenticated: 0, idle_timeout: 0, sink_error: 0 } });
    for (const chunk of chunks) {
      reader.push(chunk);
      largestKept = Math.max(largestKept, (reader as unknown as { keptBytes: number }).keptBytes);
    }
    reader.end();
    assert.deepEqual(frames, [boundedText(line), '<12>next', boundedText(line), '<13>after']);
    assert.ok(largestKept <= MAX_LINE_BYTES, `kept ${largestKept} bytes`);
  });
  it('never cuts inside a character, whatever the chunks', () => {
    for (const prefix of ['<11>', '<11>x', '<11>xx']) {
      const line = `${prefix}${'é€😀'.repeat(MAX_LINE_BYTES / 4)}`;
      const whole = Buffer.from(`${line}\n`);
      const chunks = [whole.subarray(0, 40_001), whole.subarray(40_001)];
      assert.deepEqual(read(chunks).frames, [boundedText(line)], prefix);
    }
  });
});

// ---- the real senders -------------------------------------------------------------------------------

interface Received {
  record: LogRecord;
  peer: SyslogPeer;
}

/** Listeners on port 0 that keep what they are given. */
async function listeners(specs: string[], options: Partial<Parameters<typeof startSyslogListeners>[1]> = {}) {
  const received: Received[] = [];
  const started = await startSyslogListeners(specs, { onRecord: (record, peer) => received.push({ record, peer }), ...options });
  const port = (transport: string) => started.addresses().find((one) => one.transport === transport)?.port as number;
  return { started, received, port };
}

function logger(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('logger', args, { env: { ...process.env, TZ: 'UTC' } }, (error) => (error ? reject(new Error(`logger ${args.join(' ')}: ${error.message}`, { cause: error })) : resolve()));
  });
}

/** The one record received whose message is `message` (waited for). */
async function receivedOne(received: Received[], message: string, limitMs = 5000): Promise<Received> {
  return eventually(() => {
    const found = received.filter((one) => one.record.message === message);
    assert.equal(found.length, 1, `one record "${message}" (got ${found.length})`);
    return found[0] as Received;
  }, limitMs);
}

/** A record's timestamp within [from, to] (to the second, for RFC 3164's), then set to undefined for an exact comparison. */
function withoutTimestamp(record: LogRecord, from: number, to: number): LogRecord {
  const at = record.timestamp?.getTime() ?? Number.NaN;
  assert.ok(at >= Math.floor(from / 1000) * 1000 && at <= to, `timestamp ${record.timestamp?.toISOString()} between the send's start and end`);
  return { ...record, timestamp: undefined };
}

describe('the listeners with logger (bsdutils)', () => {
  let l: Awaited<ReturnType<typeof listeners>>;
  before(async () => {
    l = await listeners(['udp://127.0.0.1:0', 'tcp://127.0.0.1:0']);
  });
  after(() => l.started.close());

  const cases = [
    { name: 'UDP, RFC 5424 with structured data and MSGID', transport: 'udp', args: ['--udp', '--rfc5424', '--sd-id', 'vm@32473', '--sd-param', 'uuid="f3b1"', '--sd-param', 'disk="vda"', '--msgid', 'BOOT'], message: 'qemu: could not open disk image' },
    { name: 'TCP octet-counted, RFC 5424', transport: 'tcp', args: ['--tcp', '--octet-count', '--rfc5424'], message: 'octet counted line' },
    { name: 'TCP LF-terminated, RFC 5424', transport: 'tcp', args: ['--tcp', '--rfc5424'], message: 'lf terminated line' },
    { name: 'TCP LF-terminated, RFC 3164', transport: 'tcp', args: ['--tcp', '--rfc3164'], message: 'bsd form over tcp' },
    { name: 'UDP, RFC 3164', transport: 'udp', args: ['--udp', '--rfc3164'], message: 'bsd form over udp' },
  ];
  for (const one of cases) {
    it(`takes ${one.name}`, async () => {
      const from = Date.now();
      await logger(['--server', '127.0.0.1', '--port', String(l.port(one.transport)), ...one.args, '-t', 'libvirtd', '-p', 'daemon.err', '--id=4242', one.message]);
      const to = Date.now();
      const got = await receivedOne(l.received, one.message);
      const rfc5424 = one.args.includes('--rfc5424');
      const fields: Record<string, string> = { 'syslog.facility': 'daemon', 'syslog.procid': '4242' };
      if (rfc5424) Object.assign(fields, { 'timeQuality.tzKnown': '1', 'timeQuality.isSynced': got.record.fields['timeQuality.isSynced'] as string });
      if (one.args.includes('--msgid')) Object.assign(fields, { 'syslog.msgid': 'BOOT', 'vm@32473.uuid': 'f3b1', 'vm@32473.disk': 'vda' });
      const rest = withoutTimestamp(got.record, from, to);
      assert.deepEqual({ ...rest, raw: '' }, record({ host: hostname(), program: 'libvirtd', severity: 3, message: one.message, fields, raw: '' }));
      assert.ok(rest.raw.startsWith(rfc5424 ? '<27>1 ' : '<27>') && rest.raw.endsWith(one.message), rest.raw);
      assert.equal(got.peer.transport, one.transport);
      assert.equal(got.peer.address, '127.0.0.1');
      assert.equal(got.peer.certificateSha256, undefined);
    });
  }
});

// ---- rsyslogd --------------------------------------------------------------------------------------

interface Certificates {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** A CA, a server certificate for 127.0.0.1 and localhost, and a client certificate, all signed by it (P-256: quick to make). */
function makeCertificates(dir: string): Certificates {
  const file = (name: string) => join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=cmi test syslog CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  const sign = (name: string, subject: string, ext: string) => {
    openssl(['req', ...ec, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', subject]);
    writeFileSync(file(`${name}.ext`), ext);
    openssl(['x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file(`${name}.pem`), '-days', '2', '-extfile', file(`${name}.ext`)]);
  };
  sign('server', '/CN=localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  sign('client', '/CN=hv7.example.org', 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n');
  return { dir, ca: file('ca.pem'), serverCert: file('server.pem'), serverKey: file('server.key'), clientCert: file('client.pem'), clientKey: file('client.key') };
}

interface Route {
  /** rsyslog's own imtcp port the test sends into. */
  inPort: number;
  /** omfwd's parameters besides type and target. */
  forward: string;
}

/** rsyslogd -n with its own configuration in `dir`: each route an imtcp input on its own port, with a ruleset forwarding by omfwd. */
async function startRsyslog(dir: string, routes: Record<string, Route>): Promise<{ close: () => Promise<void>; log: () => string }> {
  const conf = [
    `global(workDirectory="${dir}" maxMessageSize="256k")`,
    'module(load="imtcp")',
    ...Object.entries(routes).flatMap(([name, route]) => [
      `input(type="imtcp" address="127.0.0.1" port="${route.inPort}" ruleset="${name}")`,
      `ruleset(name="${name}") { action(type="omfwd" target="127.0.0.1" ${route.forward}) }`,
    ]),
    '',
  ].join('\n');
  writeFileSync(join(dir, 'rsyslog.conf'), conf);
  let output = '';
  const child: ChildProcess = spawn('setpriv', ['--pdeathsig', 'SIGKILL', 'rsyslogd', '-n', '-f', join(dir, 'rsyslog.conf'), '-i', join(dir, 'rsyslogd.pid')], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  try {
    for (const route of Object.values(routes)) {
      await eventually(async () => {
        assert.ok(child.exitCode === null, `rsyslogd exited: ${output}`);
        await new Promise<void>((resolve, reject) => {
          const socket = connect(route.inPort, '127.0.0.1', () => socket.end(() => resolve()));
          socket.on('error', reject);
        });
      }, 15_000);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { close, log: () => output };
}

/** Sends `text` over TLS with `openssl s_client` (trusting the test's CA), and waits for it to end. */
function sClient(port: number, text: string, args: string[]): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('openssl', ['s_client', '-quiet', '-no_ign_eof', '-connect', `127.0.0.1:${port}`, '-CAfile', join(dir, 'ca.pem'), ...args], { stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('exit', () => resolve());
    child.stdin.end(text);
  });
}
let dir: string;

/** Sends `text` to 127.0.0.1:`port` over TCP and closes. */
function sendTcp(port: number, text: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text, () => resolve()));
    socket.on('error', reject);
  });
}

describe('the listeners with rsyslogd (omfwd: TCP, and TLS through gtls)', { timeout: 40_000 }, () => {
  let certs: Certificates;
  let plain: Awaited<ReturnType<typeof listeners>>;
  let verified: Awaited<ReturnType<typeof listeners>>;
  let rsyslog: Awaited<ReturnType<typeof startRsyslog>>;
  const inPorts: Record<string, number> = {};

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cmi-rsyslog-'));
    certs = makeCertificates(dir);
    const tls = { cert: readFileSync(certs.serverCert), key: readFileSync(certs.serverKey) };
    plain = await listeners(['tcp://127.0.0.1:0', 'tls://127.0.0.1:0'], { tls });
    verified = await listeners(['tls://127.0.0.1:0'], { tls: { ...tls, ca: readFileSync(certs.ca) } });
    for (const name of ['tcp', 'lf', 'tlsCert', 'tlsNoCert', 'tlsRefused']) inPorts[name] = await freePort();
    const template5424 = 'template="RSYSLOG_SyslogProtocol23Format" TCP_Framing="octet-counted"';
    const gtls = `StreamDriver="gtls" StreamDriverMode="1" StreamDriverAuthMode="x509/name" StreamDriverPermittedPeers="localhost" StreamDriver.CAFile="${certs.ca}"`;
    const clientCert = `StreamDriver.CertFile="${certs.clientCert}" StreamDriver.KeyFile="${certs.clientKey}"`;
    rsyslog = await startRsyslog(dir, {
      tcp: { inPort: inPorts.tcp as number, forward: `port="${plain.port('tcp')}" protocol="tcp" ${template5424}` },
      lf: { inPort: inPorts.lf as number, forward: `port="${plain.port('tcp')}" protocol="tcp" template="RSYSLOG_ForwardFormat"` },
      tlsCert: { inPort: inPorts.tlsCert as number, forward: `port="${verified.port('tls')}" protocol="tcp" ${template5424} ${gtls} ${clientCert}` },
      tlsNoCert: { inPort: inPorts.tlsNoCert as number, forward: `port="${plain.port('tls')}" protocol="tcp" ${template5424} ${gtls}` },
      tlsRefused: { inPort: inPorts.tlsRefused as number, forward: `port="${verified.port('tls')}" protocol="tcp" ${template5424} ${gtls}` },
    });
  });
  after(async () => {
    await rsyslog?.close();
    await plain?.started.close();
    await verified?.started.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const line = (message: string) => `<11>1 2026-12-03T06:59:58.123456+00:00 hv7.example.org nova-compute 3141 VMFAIL [origin@32473 ip="192.0.2.7" why="disk \\"vda\\" \\]full\\\\"] ${message}\n`;
  const expected = (message: string): LogRecord => record({
    host: 'hv7.example.org', program: 'nova-compute', severity: 3, message, timestamp: new Date('2026-12-03T06:59:58.123Z'),
    fields: { 'syslog.facility': 'user', 'syslog.procid': '3141', 'syslog.msgid': 'VMFAIL', 'origin@32473.ip': '192.0.2.7', 'origin@32473.why': 'disk "vda" ]full\\' },
    raw: line(message).slice(0, -1),
  });

  it('takes its RFC 5424 template octet-counted over TCP, structured data escaped as it was', async () => {
    await sendTcp(inPorts.tcp as number, line('instance failed to spawn over tcp'));
    const got = await receivedOne(plain.received, 'instance failed to spawn over tcp', 10_000);
    assert.deepEqual(got.record, expected('instance failed to spawn over tcp'));
    assert.deepEqual({ transport: got.peer.transport, address: got.peer.address, certificateSha256: got.peer.certificateSha256 }, { transport: 'tcp', address: '127.0.0.1', certificateSha256: undefined });
  });

  it('takes RSYSLOG_ForwardFormat LF-terminated (RFC 3164 with an RFC 3339 timestamp)', async () => {
    await sendTcp(inPorts.lf as number, line('forward format line'));
    const got = await receivedOne(plain.received, 'forward format line', 10_000);
    assert.deepEqual({ ...got.record, raw: '' }, record({
      host: 'hv7.example.org', program: 'nova-compute', severity: 3, message: 'forward format line', timestamp: new Date('2026-12-03T06:59:58.123Z'),
      fields: { 'syslog.facility': 'user', 'syslog.procid': '3141' }, raw: '',
    }));
  });

  it('takes TLS with a client certificate the CA signed, passing on its SHA-256 fingerprint', async () => {
    await sendTcp(inPorts.tlsCert as number, line('over tls with a certificate'));
    const got = await receivedOne(verified.received, 'over tls with a certificate', 10_000);
    assert.deepEqual(got.record, expected('over tls with a certificate'));
    const fingerprint = createHash('sha256').update(new X509Certificate(readFileSync(certs.clientCert)).raw).digest('hex');
    assert.deepEqual({ transport: got.peer.transport, address: got.peer.address, certificateSha256: got.peer.certificateSha256 }, { transport: 'tls', address: '127.0.0.1', certificateSha256: fingerprint });
    assert.match(fingerprint, /^[0-9a-f]{64}$/);
  });

  it('takes TLS without a client certificate where no CA is set, with no fingerprint', async () => {
    await sendTcp(inPorts.tlsNoCert as number, line('over tls without a certificate'));
    const got = await receivedOne(plain.received, 'over tls without a certificate', 10_000);
    assert.deepEqual(got.record, expected('over tls without a certificate'));
    assert.equal(got.peer.transport, 'tls');
    assert.equal(got.peer.certificateSha256, undefined);
  });

  it('passes on the fingerprint of a self-signed client certificate where no CA is set, and refuses it where one is (openssl s_client)', async () => {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'self.key'), '-out', join(dir, 'self.pem'), '-days', '2', '-subj', '/CN=pinned host'], { stdio: 'ignore' });
    const fingerprint = createHash('sha256').update(new X509Certificate(readFileSync(join(dir, 'self.pem'))).raw).digest('hex');
    await sClient(plain.port('tls'), '<27>1 - pinned libvirtd - - - pinned by fingerprint\n', ['-cert', join(dir, 'self.pem'), '-key', join(dir, 'self.key')]);
    const got = await receivedOne(plain.received, 'pinned by fingerprint');
    assert.equal(got.peer.certificateSha256, fingerprint);
    const refused = verified.started.counters.dropped.client_certificate;
    await sClient(verified.port('tls'), '<27>1 - pinned libvirtd - - - refused self-signed\n', ['-cert', join(dir, 'self.pem'), '-key', join(dir, 'self.key')]);
    await eventually(() => assert.ok(verified.started.counters.dropped.client_certificate > refused, 'the self-signed certificate refused'));
    assert.equal(verified.received.filter((one) => one.record.message === 'refused self-signed').length, 0);
  });

  it('refuses TLS without a client certificate where a CA is set, and counts it', async () => {
    await sendTcp(inPorts.tlsRefused as number, line('refused for no certificate'));
    await eventually(() => assert.ok(verified.started.counters.dropped.client_certificate >= 1, 'a refusal counted'), 10_000);
    assert.equal(verified.received.filter((one) => one.record.message === 'refused for no certificate').length, 0);
  });
});

// ---- bad input -------------------------------------------------------------------------------------

/** Connects, writes `bytes`, and resolves once the listener has closed the connection. */
function writeUntilClosed(port: number, bytes: Buffer | string): Promise<void> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
  });
}

describe('the listeners against bad input', { timeout: 30_000 }, () => {
  let l: Awaited<ReturnType<typeof listeners>>;
  let badDir: string;
  before(async () => {
    badDir = mkdtempSync(join(tmpdir(), 'cmi-syslog-bad-'));
    const certs = makeCertificates(badDir);
    l = await listeners(['udp://127.0.0.1:0', 'tcp://127.0.0.1:0', 'tls://127.0.0.1:0'], { tls: { cert: readFileSync(certs.serverCert), key: readFileSync(certs.serverKey) } });
  });
  after(async () => {
    await l.started.close();
    rmSync(badDir, { recursive: true, force: true });
  });

  /** The listener still reads a line from logger over TCP. */
  async function stillAnswers(message: string): Promise<void> {
    await logger(['--server', '127.0.0.1', '--port', String(l.port('tcp')), '--tcp', '--rfc5424', '-t', 'probe', message]);
    await receivedOne(l.received, message);
  }

  it('closes a connection that sends junk, counts it, and keeps reading others', async () => {
    const before = l.started.counters.dropped.framing;
    await writeUntilClosed(l.port('tcp'), Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0xfe]));
    await writeUntilClosed(l.port('tcp'), 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(l.started.counters.dropped.framing, before + 2);
    await stillAnswers('after junk');
  });

  it('closes a TLS handshake of junk and counts it', async () => {
    const before = l.started.counters.dropped.handshake;
    await writeUntilClosed(l.port('tls'), Buffer.alloc(300, 0x41));
    await eventually(() => assert.equal(l.started.counters.dropped.handshake, before + 1));
    await stillAnswers('after a junk handshake');
  });

  it('counts a line that is no syslog, and a line onRecord throws for, and goes on', async () => {
    const before = { ...l.started.counters.dropped };
    await sendTcp(l.port('tcp'), '<13>not syslog at all\n<13>1 - h a - - - fine\n');
    await receivedOne(l.received, 'fine');
    assert.equal(l.started.counters.dropped.unparsable, before.unparsable + 1);
    const throwing = await startSyslogListeners(['tcp://127.0.0.1:0'], { onRecord: () => { throw new Error('sink down'); } });
    try {
      await sendTcp(throwing.addresses()[0]?.port as number, '<13>1 - h a - - - one\n<13>1 - h a - - - two\n');
      await eventually(() => assert.equal(throwing.counters.dropped.sink_error, 2));
      assert.equal(throwing.counters.records, 0);
    } finally {
      await throwing.close();
    }
  });

  it('cuts an oversize line at MAX_LINE_BYTES, marked, skips the rest of its frame and reads the next', async () => {
    const big = `<11>1 - h big - - - ${'x'.repeat(200 * 1024)}`;
    const truncated = l.started.counters.truncated;
    await sendTcp(l.port('tcp'), `${big}\n<11>1 - h big - - - next after big\n`);
    await receivedOne(l.received, 'next after big');
    const got = l.received.find((one) => one.record.program === 'big' && one.record.raw.length > 1000);
    assert.equal(got?.record.raw, boundedText(big));
    assert.equal(l.started.counters.truncated, truncated + 1);
  });

  it('survives a flood of UDP, counting every datagram it read, and keeps answering', async () => {
    const received = l.started.counters.received;
    const socket = createSocket('udp4');
    const datagram = Buffer.from('<14>1 - flood flood - - - one of many');
    const sent = 20_000;
    await new Promise<void>((resolve, reject) => {
      let left = sent;
      const next = () => {
        // Batches of 500 with a turn of the event loop between: the sender's own buffer never fills.
        for (let i = 0; i < 500 && left > 0; i += 1, left -= 1) socket.send(datagram, l.port('udp'), '127.0.0.1', (error) => error && reject(error));
        if (left > 0) setImmediate(next);
        else resolve();
      };
      next();
    });
    socket.send('junk datagram', l.port('udp'), '127.0.0.1');
    await stillAnswers('after the flood');
    socket.close();
    // What the kernel's buffer held is read (how much depends on net.core.rmem_max), each datagram counted once.
    const read = l.started.counters.received - received;
    const flood = l.received.filter((one) => one.record.host === 'flood').length;
    assert.ok(flood > 0 && flood <= sent, `read ${flood} of ${sent}`);
    assert.equal(l.started.counters.records, l.received.length);
    assert.ok(read >= flood + 1, 'the flood and the probe counted');
  });

  it('closes a TLS handshake that never comes, after handshakeTimeoutMs, and counts it', async () => {
    const certs = { cert: readFileSync(join(badDir, 'server.pem')), key: readFileSync(join(badDir, 'server.key')) };
    const slow = await startSyslogListeners(['tls://127.0.0.1:0'], { onRecord: () => undefined, tls: certs, handshakeTimeoutMs: 300 });
    try {
      const started = Date.now();
      await writeUntilClosed(slow.addresses()[0]?.port as number, '');
      const waited = Date.now() - started;
      // Bounds far apart (the default is 10 s): a loaded machine stretches the wait, never by seconds.
      assert.ok(waited >= 250 && waited < 5000, `closed once the handshake timed out (after ${waited} ms)`);
      await eventually(() => assert.equal(slow.counters.dropped.handshake, 1));
    } finally {
      await slow.close();
    }
  });

  it('listens on IPv6, the peer its address', async () => {
    const six = await listeners(['tcp://[::1]:0', 'udp://[::1]:0']);
    try {
      await logger(['--server', '::1', '--port', String(six.port('tcp')), '--tcp', '-t', 'v6', 'over ipv6 tcp']);
      await logger(['--server', '::1', '--port', String(six.port('udp')), '--udp', '-t', 'v6', 'over ipv6 udp']);
      assert.equal((await receivedOne(six.received, 'over ipv6 tcp')).peer.address, '::1');
      assert.equal((await receivedOne(six.received, 'over ipv6 udp')).peer.address, '::1');
    } finally {
      await six.started.close();
    }
  });

  it('refuses connections past maxConnections, and closes idle ones, counting both', async () => {
    const limited = await startSyslogListeners(['tcp://127.0.0.1:0'], { onRecord: () => undefined, maxConnections: 2, idleTimeoutMs: 300 });
    const port = limited.addresses()[0]?.port as number;
    const sockets: Socket[] = [];
    try {
      const closed = [0, 1, 2].map(() => new Promise<number>((resolve) => {
        const opened = Date.now();
        const socket = connect(port, '127.0.0.1');
        sockets.push(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(Date.now() - opened));
      }));
      await Promise.all(closed);
      assert.equal(limited.counters.dropped.connection_limit, 1);
      assert.equal(limited.counters.dropped.idle_timeout, 2);
      await eventually(() => assert.equal(limited.counters.connections.open, 0));
    } finally {
      for (const socket of sockets) socket.destroy();
      await limited.close();
    }
  });
});

describe('the listeners reading a burst a share of each turn at a time', () => {
  it('reads 30,000 lines written at once over many turns of the event loop, every line once and in order', async () => {
    // The turns of the event loop, counted by a chain of setImmediate: each line is marked with the turn it was read in.
    let turn = 0;
    let counting = true;
    const count = () => {
      turn += 1;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const turns: number[] = [];
    // Each line costs the sink 5 µs, so that a turn's quarter millisecond holds some 50 lines and a 64 KiB chunk some 1,800.
    const { started, received, port } = await listeners(['tcp://127.0.0.1:0'], { onRecord: (record, peer) => {
      const until = performance.now() + 0.005;
      while (performance.now() < until);
      received.push({ record, peer });
      turns.push(turn);
    } });
    const lines = 30_000;
    try {
      const burst = Array.from({ length: lines }, (_, n) => {
        const text = `<14>1 - host app - - - line ${n}`;
        return `${Buffer.byteLength(text)} ${text}`;
      }).join('');
      const socket = connect(port('tcp'), '127.0.0.1', () => socket.end(burst));
      await eventually(() => assert.equal(received.length, lines), 10_000);
      assert.ok(received.every((one, n) => one.record.message === `line ${n}`), 'every line once, in order');
      const perTurn = new Map<number, number>();
      for (const at of turns) perTurn.set(at, (perTurn.get(at) ?? 0) + 1);
      // 30,000 lines are some 10 ms of work: read half a millisecond a turn, they take many turns.
      assert.ok(perTurn.size >= 5, `read in ${perTurn.size} turns`);
      assert.ok(Math.max(...perTurn.values()) < lines / 4, `at most ${Math.max(...perTurn.values())} lines in a turn`);
      // A turn reads no more than its share (checked every 16 lines), never a whole chunk.
      assert.ok(Math.max(...perTurn.values()) <= 500, `at most ${Math.max(...perTurn.values())} lines in a turn`);
    } finally {
      counting = false;
      await started.close();
    }
  });
});

describe('the listeners pausing while the backlog is full (TCP flow control)', () => {
  it('takes all of a chunk read over several turns though its sender closed the connection meanwhile', async () => {
    let closedBeforeLast = false;
    const { started, received, port } = await listeners(['tcp://127.0.0.1:0'], {
      // A sink slow enough (20 µs a line) that the chunk takes some 24 turns' shares.
      onRecord: (record, peer) => {
        const until = performance.now() + 0.02;
        while (performance.now() < until);
        received.push({ record, peer });
        if (received.length === 600) closedBeforeLast = started.counters.connections.open === 0;
      },
    });
    try {
      const lines = Array.from({ length: 600 }, (_, n) => {
        const text = `<14>1 - host app - - - line ${n}`;
        return `${Buffer.byteLength(text)} ${text}`;
      }).join('');
      const socket = connect(port('tcp'), '127.0.0.1', () => socket.end(lines));
      await eventually(() => assert.equal(received.length, 600));
      assert.ok(received.every((one, n) => one.record.message === `line ${n}`), 'every line once, in order');
      assert.equal(closedBeforeLast, true, 'the connection was gone before its last line was read');
    } finally {
      await started.close();
    }
  });
  it('reads no more of a TCP connection once a chunk finds the backlog full, and the rest once there is room', async () => {
    let full = false;
    const rooms: Array<{ at: number; release: () => void }> = [];
    const { started, received, port } = await listeners(['tcp://127.0.0.1:0'], {
      backlog: { full: () => full, room: () => new Promise<void>((release) => rooms.push({ at: received.length, release })) },
    });
    const frame = (n: number) => {
      const text = `<14>1 - host-${n} app - - - line ${n}`;
      return `${Buffer.byteLength(text)} ${text}`;
    };
    try {
      const first = connect(port('tcp'), '127.0.0.1');
      await new Promise((resolve) => first.once('connect', resolve));
      full = true;
      first.write(frame(0));
      await eventually(() => assert.deepEqual(rooms.map((room) => room.at), [1], 'paused after its first chunk'));
      await new Promise<void>((resolve) => first.end(Array.from({ length: 100 }, (_, n) => frame(n + 1)).join(''), () => resolve()));
      // A second connection's first chunk is read (and pauses it too): the loop read sockets after the first one's rest arrived.
      const second = connect(port('tcp'), '127.0.0.1', () => second.end(frame(1000)));
      await receivedOne(received, 'line 1000');
      assert.deepEqual(received.map((one) => one.record.message), ['line 0', 'line 1000']);
      full = false;
      for (const room of rooms) room.release();
      await eventually(() => assert.equal(received.length, 102, `every line once there is room (got ${received.length})`));
      assert.deepEqual(received.map((one) => one.record.message), ['line 0', 'line 1000', ...Array.from({ length: 100 }, (_, n) => `line ${n + 1}`)]);
    } finally {
      await started.close();
    }
  });
});
