import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  journalCounters,
  JournalExportError,
  journalExportParser,
  MAX_ENTRY_FIELDS,
  type JournalCounters,
} from '../src/logs/journal-export.js';
import { JOURNAL_ANSWERS, journalUploadRoutes, type JournalPeer } from '../src/logs/journal-upload.routes.js';
import { MAX_FIELD_CHARS, MAX_FIELDS, MAX_LINE_BYTES, type LogRecord } from '../src/logs/log-record.js';
import { ServiceUnavailable } from '../src/shared/problems.js';
import { eventually } from './support/eventually.js';
import { appendToJournal, BOOT, cursorsOf, entry, exportText, type Field, run, savedCursor, UPLOAD } from './support/journal.js';

/**
 * The journald reader (docs/log-sources.md#journald-systemd-journal-upload) against the real, unmodified sender: Debian's
 * systemd-journal-upload posting a journal file this test made with systemd-journal-remote (both
 * from the systemd-journal-remote package), to a fastify server with journalUploadRoutes.
 */

const KEY_ID = '7';
const PUBLIC_KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

const LIBVIRTD = entry(0, [
  ['_HOSTNAME', 'hv1'],
  ['_SYSTEMD_UNIT', 'libvirtd.service'],
  ['_COMM', 'libvirtd'],
  ['_PID', '1234'],
  ['SYSLOG_IDENTIFIER', 'libvirtd'],
  ['PRIORITY', '3'],
  ['MESSAGE', 'internal error: qemu unexpectedly closed the monitor: vm-42'],
]);
const CEPH = entry(1, [
  ['_HOSTNAME', 'st1'],
  ['_SYSTEMD_UNIT', 'ceph-osd@3.service'],
  ['_COMM', 'ceph-osd'],
  ['PRIORITY', '2'],
  ['MESSAGE', Buffer.from('osd.3 I/O error\n  at bluestore read 0x1f\n  at rocksdb')],
  ['CORE', Buffer.from([0x00, 0x01, 0xff, 0x41])],
]);
const KWORKER = entry(2, [
  ['_HOSTNAME', 'hv1'],
  ['_COMM', 'kworker/0:1'],
  ['MESSAGE', 'hung task: réseau'],
]);
const FOURTH = entry(3, [
  ['_HOSTNAME', 'hv2'],
  ['SYSLOG_IDENTIFIER', 'nova-compute'],
  ['PRIORITY', '4'],
  ['MESSAGE', 'disk almost full'],
]);

/** What a test `accept` took: every call, and the records by cursor (an entry already taken recognised). */
interface Taken {
  calls: { key: string; records: LogRecord[]; lastCursor: string | undefined }[];
  byCursor: Map<string, LogRecord>;
  again: string[];
  refuse: boolean;
}

async function startServer(taken: Taken, counters: JournalCounters): Promise<{ app: FastifyInstance; base: string }> {
  const app = Fastify();
  await app.register(journalUploadRoutes<string>({
    counters,
    authenticate: (keyId, publicKey) => Promise.resolve(keyId === KEY_ID && publicKey === PUBLIC_KEY ? `key ${keyId}` : undefined),
    accept: (key, records, lastCursor) => {
      if (taken.refuse) return Promise.reject(new ServiceUnavailable('the write queue is full', 5));
      taken.calls.push({ key, records, lastCursor });
      for (const record of records) {
        const cursor = record.cursor ?? '';
        if (taken.byCursor.has(cursor)) taken.again.push(cursor);
        else taken.byCursor.set(cursor, record);
      }
      return Promise.resolve();
    },
  }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

/** A POST the way the uploader makes one (chunked), with `body` sent in the chunks given. */
function post(base: string, path: string, chunks: Buffer[], contentType = 'application/vnd.fdo.journal'): Promise<{ status: number; type: string | undefined; text: string; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}${path}`, { method: 'POST', headers: { 'content-type': contentType, 'transfer-encoding': 'chunked' } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      const retryAfter = response.headers['retry-after'];
      response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type'], text, ...(retryAfter === undefined ? {} : { retryAfter }) }));
    });
    // The server may answer and close before the whole body went (a refused key): that is its answer.
    request.on('error', reject);
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

const UPLOAD_PATH = `/api/${KEY_ID}/journal/${PUBLIC_KEY}/upload`;

/** Every record a parser gives for `input` fed in pieces of `size` bytes. */
async function parseAll(input: Buffer, size: number, counters = journalCounters()): Promise<LogRecord[]> {
  const records: LogRecord[] = [];
  const parser = journalExportParser((record) => {
    records.push(record);
  }, { counters });
  for (let at = 0; at < input.length; at += size) await parser.push(input.subarray(at, at + size));
  parser.end();
  return records;
}

describe('journald: systemd-journal-upload into journalUploadRoutes', () => {
  let dir: string;
  let journal: string;
  let state: string;
  let base: string;
  let app: FastifyInstance;
  const counters = journalCounters();
  const taken: Taken = { calls: [], byCursor: new Map(), again: [], refuse: false };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cmi-journald-'));
    journal = join(dir, 'upload.journal');
    state = join(dir, 'state');
    await appendToJournal(journal, [LIBVIRTD, CEPH, KWORKER]);
    ({ app, base } = await startServer(taken, counters));
  });
  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const upload = (stateFile: string, publicKey = PUBLIC_KEY) =>
    run(UPLOAD, ['--follow=no', `--file=${journal}`, `--url=${base}/api/${KEY_ID}/journal/${publicKey}`, `--save-state=${stateFile}`]);

  it('takes every entry as a record: host, program, severity, message (binary, multi-line), timestamp, fields, raw, cursor', async () => {
    const result = await upload(state);
    assert.equal(result.code, 0, result.stderr);
    const cursors = await cursorsOf(journal);
    assert.equal(cursors.length, 3);
    assert.equal(taken.calls.length, 1);
    const [call] = taken.calls;
    assert.equal(call!.key, `key ${KEY_ID}`);
    assert.deepEqual(call!.records.map((record) => record.cursor), cursors);
    assert.equal(call!.lastCursor, cursors[2]);
    // Answered 202 only once accepted: the uploader saved the last cursor.
    assert.equal(savedCursor(state), cursors[2]);

    const [libvirtd, ceph, kworker] = call!.records;
    assert.deepEqual({ ...libvirtd, raw: undefined }, {
      source: 'journald',
      host: 'hv1',
      program: 'libvirtd',
      severity: 3,
      message: 'internal error: qemu unexpectedly closed the monitor: vm-42',
      timestamp: new Date('2025-12-03T07:00:00.000Z'),
      fields: { _BOOT_ID: BOOT, _HOSTNAME: 'hv1', _SYSTEMD_UNIT: 'libvirtd.service', _COMM: 'libvirtd', _PID: '1234', SYSLOG_IDENTIFIER: 'libvirtd', PRIORITY: '3' },
      cursor: cursors[0],
      raw: undefined,
    });
    assert.deepEqual(libvirtd!.raw.split('\n').sort(), [
      '',
      `__CURSOR=${cursors[0]}`,
      '__MONOTONIC_TIMESTAMP=1000',
      '__REALTIME_TIMESTAMP=1764745200000000',
      'MESSAGE=internal error: qemu unexpectedly closed the monitor: vm-42',
      'PRIORITY=3',
      'SYSLOG_IDENTIFIER=libvirtd',
      `_BOOT_ID=${BOOT}`,
      '_COMM=libvirtd',
      '_HOSTNAME=hv1',
      '_PID=1234',
      '_SYSTEMD_UNIT=libvirtd.service',
    ].sort());

    assert.deepEqual({ ...ceph, raw: undefined }, {
      source: 'journald',
      host: 'st1',
      program: 'ceph-osd@3.service',
      severity: 2,
      message: 'osd.3 I/O error\n  at bluestore read 0x1f\n  at rocksdb',
      timestamp: new Date('2025-12-03T07:00:01.000Z'),
      fields: { _BOOT_ID: BOOT, _HOSTNAME: 'st1', _SYSTEMD_UNIT: 'ceph-osd@3.service', _COMM: 'ceph-osd', PRIORITY: '2', CORE: '\uFFFD\u0001\uFFFDA' },
      cursor: cursors[1],
      raw: undefined,
    });
    // The binary fields in raw on one line each, their control characters written out.
    assert.ok(ceph!.raw.includes('\nMESSAGE=osd.3 I/O error\\n  at bluestore read 0x1f\\n  at rocksdb\n'), ceph!.raw);
    assert.ok(ceph!.raw.includes('\nCORE=\\x00\\x01\uFFFDA\n'), ceph!.raw);

    assert.deepEqual({ ...kworker, raw: undefined }, {
      source: 'journald',
      host: 'hv1',
      program: 'kworker/0:1',
      severity: 6,
      message: 'hung task: réseau',
      timestamp: new Date('2025-12-03T07:00:02.000Z'),
      fields: { _BOOT_ID: BOOT, _HOSTNAME: 'hv1', _COMM: 'kworker/0:1' },
      cursor: cursors[2],
      raw: undefined,
    });
    assert.equal(counters.records, 3);
  });

  it('recognises the entry the uploader sends again when it starts from its saved cursor', async () => {
    await appendToJournal(journal, [FOURTH]);
    const cursors = await cursorsOf(journal);
    const calls = taken.calls.length;
    const result = await upload(state);
    assert.equal(result.code, 0, result.stderr);
    const second = taken.calls.slice(calls);
    assert.equal(second.length, 1);
    // The last entry taken comes again, then the new one.
    assert.deepEqual(second[0]!.records.map((record) => record.cursor), [cursors[2], cursors[3]]);
    assert.deepEqual(taken.again, [cursors[2]]);
    assert.equal(taken.byCursor.size, 4);
    assert.equal(taken.byCursor.get(cursors[3]!)!.program, 'nova-compute');
    assert.equal(savedCursor(state), cursors[3]);
  });

  it('refuses a wrong key with 401: the uploader fails and keeps its cursor, nothing is taken', async () => {
    const calls = taken.calls.length;
    const before = savedCursor(state);
    const refused = counters.dropped.unauthenticated;
    const result = await upload(state, 'not-the-key');
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`failed with code 401: ${JOURNAL_ANSWERS.unauthenticated}`));
    assert.equal(savedCursor(state), before);
    assert.equal(taken.calls.length, calls);
    assert.equal(counters.dropped.unauthenticated, refused + 1);
  });

  it('answers 503 while accept cannot take records: the uploader fails and keeps its cursor', async () => {
    const fresh = join(dir, 'state-503');
    taken.refuse = true;
    try {
      const result = await upload(fresh);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /failed with code 503: Service unavailable: the write queue is full; try again later\n/);
      assert.equal(savedCursor(fresh), undefined);
      const answer = await post(base, UPLOAD_PATH, [Buffer.from('MESSAGE=x\n\n')]);
      assert.deepEqual(answer, { status: 503, type: 'text/plain', text: 'Service unavailable: the write queue is full; try again later\n', retryAfter: '5' });
    } finally {
      taken.refuse = false;
    }
  });

  it('answers a body that is not the export format 400, after taking the entries before the mistake', async () => {
    const calls = taken.calls.length;
    const malformed = counters.dropped.malformed;
    const answer = await post(base, UPLOAD_PATH, [Buffer.from('__CURSOR=c1\nMESSAGE=fine\n\nthis is not a field\nMESSAGE=never\n\n')]);
    assert.deepEqual(answer, { status: 400, type: 'text/plain', text: 'The line ending at byte 46 is neither a NAME=value field nor the name of a binary field.\n' });
    assert.deepEqual(taken.calls.slice(calls).map((call) => call.records.map((record) => record.message)), [['fine']]);
    assert.equal(counters.dropped.malformed, malformed + 1);

    const huge = Buffer.alloc(8);
    huge.writeBigUInt64LE(1n << 40n);
    const binary = await post(base, UPLOAD_PATH, [Buffer.from('MESSAGE\n'), huge]);
    assert.deepEqual(binary, { status: 400, type: 'text/plain', text: 'The binary field MESSAGE declares 1099511627776 bytes, more than the 805306368 a field may have.\n' });
  });

  it('answers a body that ends inside an entry 417, as systemd-journal-remote does', async () => {
    const answer = await post(base, UPLOAD_PATH, [Buffer.from('MESSAGE=one\n\nMESSAGE=cut'), Buffer.from(' off')]);
    assert.deepEqual(answer, { status: 417, type: 'text/plain', text: 'Premature EOF. 15 bytes of trailing data not processed.\n' });
  });

  it('hands records on while the body is still coming, and answers only once they were accepted', async () => {
    const streamed: Taken = { calls: [], byCursor: new Map(), again: [], refuse: false };
    const small = Fastify();
    await small.register(journalUploadRoutes<string>({
      batchRecords: 1,
      authenticate: () => Promise.resolve('k'),
      accept: (_key, records) => {
        streamed.calls.push({ key: 'k', records, lastCursor: undefined });
        return Promise.resolve();
      },
    }));
    await small.listen({ host: '127.0.0.1', port: 0 });
    try {
      const port = (small.server.address() as AddressInfo).port;
      let answered = false;
      const answer = new Promise<number>((resolve, reject) => {
        const request = httpRequest(`http://127.0.0.1:${port}/api/1/journal/k/upload`, { method: 'POST', headers: { 'content-type': 'application/vnd.fdo.journal', 'transfer-encoding': 'chunked' } }, (response) => {
          answered = true;
          response.resume();
          response.on('end', () => resolve(response.statusCode!));
        });
        request.on('error', reject);
        request.write('__CURSOR=first\nMESSAGE=one\n\n');
        void eventually(() => assert.equal(streamed.calls.length, 1, 'the first entry accepted before the body ended'), 5000).then(() => {
          assert.equal(answered, false);
          request.end('__CURSOR=second\nMESSAGE=two\n\n');
        }, (error: Error) => {
          // The body never ends: the request is closed, so that the server closes too.
          request.destroy();
          reject(error);
        });
      });
      assert.equal(await answer, 202);
      assert.deepEqual(streamed.calls.map((call) => call.records.map((record) => record.cursor)), [['first'], ['second']]);
    } finally {
      await small.close();
    }
  });

  it('answers another Content-Type 415 and an empty upload 202', async () => {
    const calls = taken.calls.length;
    assert.deepEqual(await post(base, UPLOAD_PATH, [Buffer.from('MESSAGE=x\n\n')], 'text/plain'), {
      status: 415,
      type: 'text/plain',
      text: 'Content-Type: application/vnd.fdo.journal is required.\n',
    });
    assert.deepEqual(await post(base, UPLOAD_PATH, []), { status: 202, type: 'text/plain', text: 'OK.\n' });
    assert.equal(taken.calls.length, calls);
  });
});

describe('journald: the export format reader', () => {
  const sample = exportText([
    [['__CURSOR', 's=1;i=1'], ['__REALTIME_TIMESTAMP', '1764745200123456'], ['MESSAGE', Buffer.from('a\nb')], ['PRIORITY', '0'], ['SYSLOG_IDENTIFIER', 'kernel']],
    [['__CURSOR', 's=1;i=2'], ['MESSAGE', 'é'], ['EMPTY', Buffer.alloc(0)], ['PRIORITY', '9']],
  ]);

  it('gives the same records whatever the chunks (down to one byte)', async () => {
    const whole = await parseAll(sample, sample.length);
    assert.equal(whole.length, 2);
    assert.deepEqual(whole.map((record) => [record.cursor, record.message, record.severity, record.program, record.timestamp?.toISOString()]), [
      ['s=1;i=1', 'a\nb', 0, 'kernel', '2025-12-03T07:00:00.123Z'],
      ['s=1;i=2', 'é', 6, undefined, undefined],
    ]);
    assert.deepEqual(whole[1]!.fields, { EMPTY: '', PRIORITY: '9' });
    for (const size of [1, 2, 3, 7, 8, 9, 13]) assert.deepEqual(await parseAll(sample, size), whole, `chunks of ${size} bytes`);
  });

  it('cuts a field over MAX_LINE_BYTES and skips the rest unkept, text or binary', async () => {
    const counters = journalCounters();
    const big = 'x'.repeat(3 * MAX_LINE_BYTES);
    const [text] = await parseAll(exportText([[['MESSAGE', big], ['OTHER', big]]]), 4096, counters);
    assert.equal(Buffer.byteLength(text!.message), MAX_LINE_BYTES);
    assert.match(text!.message, /^x+… \[truncated: \d+ more bytes\]$/);
    const kept = text!.message.indexOf('…');
    assert.equal(text!.message, `${'x'.repeat(kept)}… [truncated: ${big.length - kept} more bytes]`);
    assert.equal(Buffer.byteLength(text!.fields['OTHER']!), MAX_FIELD_CHARS);
    assert.ok(Buffer.byteLength(text!.raw) <= MAX_LINE_BYTES, 'raw bounded');
    assert.equal(counters.cut, 2);

    // A binary MESSAGE of 20 MiB, fed in 1 MiB chunks: cut, never held whole.
    const header = Buffer.concat([Buffer.from('__CURSOR=b\nMESSAGE\n'), Buffer.alloc(8)]);
    const size = 20 * 1024 * 1024;
    header.writeBigUInt64LE(BigInt(size), header.length - 8);
    const records: LogRecord[] = [];
    const parser = journalExportParser((record) => {
      records.push(record);
    });
    await parser.push(header);
    const chunk = Buffer.alloc(1024 * 1024, 'é');
    for (let sent = 0; sent < size; sent += chunk.length) await parser.push(chunk);
    await parser.push(Buffer.from('\nPRIORITY=3\n\n'));
    parser.end();
    assert.equal(records.length, 1);
    assert.equal(records[0]!.severity, 3);
    assert.ok(Buffer.byteLength(records[0]!.message) <= MAX_LINE_BYTES, 'message bounded');
    assert.match(records[0]!.message, /^(é)+… \[truncated: \d+ more bytes\]$/);
  });

  it('holds no more of a huge field than it keeps: text or binary, the rest is skipped unread into memory', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'y');
    const total = 128 * chunk.length;
    const binarySize = Buffer.alloc(8);
    binarySize.writeBigUInt64LE(BigInt(total));
    for (const [head, tail] of [
      [Buffer.from('MESSAGE='), Buffer.from('\n\n')],
      [Buffer.concat([Buffer.from('MESSAGE\n'), binarySize]), Buffer.from('\n\n')],
    ] as const) {
      const records: LogRecord[] = [];
      const parser = journalExportParser((record) => {
        records.push(record);
      });
      const baseline = process.memoryUsage().arrayBuffers;
      let peak = 0;
      await parser.push(head);
      for (let sent = 0; sent < total; sent += chunk.length) {
        await parser.push(chunk);
        peak = Math.max(peak, process.memoryUsage().arrayBuffers - baseline);
      }
      await parser.push(tail);
      parser.end();
      assert.ok(peak < 16 * 1024 * 1024, `held ${peak} bytes of a ${total}-byte field`);
      // Cut as boundedText cuts the whole: room for the marker naming every byte left out.
      const room = MAX_LINE_BYTES - Buffer.byteLength(`… [truncated: ${total} more bytes]`);
      const expected = `${'y'.repeat(room)}… [truncated: ${total - room} more bytes]`;
      assert.ok(records[0]!.message === expected, `cut as boundedText cuts: ${records[0]!.message.slice(-40)}`);
    }
  });

  it('keeps at most MAX_FIELDS fields, ignores an invalid name, stops past MAX_ENTRY_FIELDS fields', async () => {
    const counters = journalCounters();
    const many: Field[] = Array.from({ length: MAX_FIELDS + 5 }, (_, i) => [`F${i}`, `${i}`]);
    const [record] = await parseAll(exportText([[['MESSAGE', 'm'], ['lower', 'x'], ['1DIGIT', 'x'], ...many]]), 100, counters);
    assert.equal(Object.keys(record!.fields).length, MAX_FIELDS);
    assert.equal(record!.fields[`F${MAX_FIELDS - 1}`], `${MAX_FIELDS - 1}`);
    assert.equal(counters.dropped.invalid_field, 2);
    assert.equal(counters.dropped.fields_over_limit, 5);

    const tooMany: Field[] = Array.from({ length: MAX_ENTRY_FIELDS + 1 }, (_, i) => [`F${i}`, 'x']);
    await assert.rejects(parseAll(exportText([tooMany]), 1000, counters), (error: unknown) => error instanceof JournalExportError && error.reason === 'too_many_fields');
    assert.equal(counters.dropped.too_many_fields, 1);
  });

  it('replaces U+0000, stops at a binary field without its newline, and reads nothing after a stop', async () => {
    const [record] = await parseAll(exportText([[['MESSAGE', Buffer.from('a\u0000b')], ['NUL', Buffer.from('\u0000')]]]), 5);
    assert.equal(record!.message, 'a\uFFFDb');
    assert.equal(record!.fields['NUL'], '\uFFFD');

    const counters = journalCounters();
    const records: LogRecord[] = [];
    const parser = journalExportParser((r) => {
      records.push(r);
    }, { counters });
    const broken = Buffer.concat([Buffer.from('MESSAGE\n'), Buffer.from([3, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('abcX')]);
    await assert.rejects(parser.push(broken), { name: 'JournalExportError', message: 'The binary field MESSAGE is not followed by a newline (byte 19).' });
    await parser.push(Buffer.from('\nMESSAGE=later\n\n'));
    parser.end();
    assert.equal(records.length, 0);
    assert.equal(counters.dropped.malformed, 1);
  });
});

/** Makes a certificate with openssl in `dir`: `name`.key and `name`.pem, signed by `ca` (self-signed without one). */
async function certificate(dir: string, name: string, ca?: string, ip?: string): Promise<void> {
  const key = join(dir, `${name}.key`);
  const pem = join(dir, `${name}.pem`);
  const subject = ['-subj', `/CN=${name}`];
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key];
  if (ca === undefined) {
    const made = await run('openssl', ['req', '-x509', ...ec, '-out', pem, '-days', '1', ...subject, '-addext', 'basicConstraints=critical,CA:TRUE']);
    assert.equal(made.code, 0, made.stderr);
    return;
  }
  const csr = join(dir, `${name}.csr`);
  const request = await run('openssl', ['req', '-new', ...ec, '-out', csr, ...subject]);
  assert.equal(request.code, 0, request.stderr);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, ip === undefined ? 'extendedKeyUsage=clientAuth\n' : `subjectAltName=IP:${ip}\nextendedKeyUsage=serverAuth\n`);
  const signed = await run('openssl', ['x509', '-req', '-in', csr, '-CA', join(dir, `${ca}.pem`), '-CAkey', join(dir, `${ca}.key`), '-CAcreateserial', '-out', pem, '-days', '1', '-extfile', ext]);
  assert.equal(signed.code, 0, signed.stderr);
}

describe('journald: systemd-journal-upload over HTTPS with a client certificate', () => {
  let dir: string;
  let journal: string;
  let app: FastifyInstance;
  let base: string;
  const peers: JournalPeer[] = [];
  const records: LogRecord[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cmi-journald-tls-'));
    journal = join(dir, 'tls.journal');
    await appendToJournal(journal, [LIBVIRTD]);
    await certificate(dir, 'ca');
    await certificate(dir, 'server', 'ca', '127.0.0.1');
    await certificate(dir, 'client', 'ca');
    await certificate(dir, 'stranger');
    const read = (name: string) => readFileSync(join(dir, name));
    app = Fastify({ https: { key: read('server.key'), cert: read('server.pem'), ca: read('ca.pem'), requestCert: true, rejectUnauthorized: true } });
    await app.register(journalUploadRoutes<string>({
      authenticate: (_keyId, _publicKey, peer) => {
        peers.push(peer);
        return Promise.resolve('tls key');
      },
      accept: (_key, taken) => {
        records.push(...taken);
        return Promise.resolve();
      },
    }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `https://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const upload = (client: string) =>
    run(UPLOAD, ['--follow=no', `--file=${journal}`, `--url=${base}/api/${KEY_ID}/journal/${PUBLIC_KEY}`, `--key=${join(dir, `${client}.key`)}`, `--cert=${join(dir, `${client}.pem`)}`, `--trust=${join(dir, 'ca.pem')}`]);

  it('takes the upload of a client whose certificate the CA signed, and tells authenticate its fingerprint', async () => {
    const result = await upload('client');
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(records.map((record) => record.message), ['internal error: qemu unexpectedly closed the monitor: vm-42']);
    const der = new X509Certificate(readFileSync(join(dir, 'client.pem'))).raw;
    assert.deepEqual(peers, [{ address: '127.0.0.1', certificateSha256: createHash('sha256').update(der).digest('hex') }]);
  });

  it('refuses the handshake of a client whose certificate no trusted CA signed: the uploader fails, nothing is taken', async () => {
    const result = await upload('stranger');
    assert.equal(result.code, 1);
    assert.match(result.stderr, /Upload to https:\/\/127\.0\.0\.1:\d+\/api\/7\/journal\/[0-9a-f]+\/upload failed: /);
    assert.equal(records.length, 1);
    assert.equal(peers.length, 1);
  });
});
