/**
 * The processes of the log sources' benchmark other than cmi (docs/benchmarks.md#logs), run by
 * tools/bench/logs.ts as `taskset -c CORE node --import tsx tools/bench/log-senders.ts MODE JSON`:
 *
 *   syslog        {port, connections, seconds, from}: TCP connections writing octet-counted RFC 5424
 *                 lines (log-payloads.ts) as fast as the kernel takes them for `seconds`, then closing.
 *   http          {url, headers, kind: 'journald'|'otlp', concurrency, seconds, records, from}: POSTs of
 *                 bodies of `records` records, `concurrency` at a time, for `seconds`; every answer read.
 *   tcp-discard   {port, controlPort}: the syslog reference: reads and discards, counting frames; a
 *                 connection to `controlPort` is told the count so far.
 *   http-discard  {port}: the journald and OTLP reference: reads each body whole and discards it,
 *                 answering `200 {}`; `GET /count` answers the bodies read so far.
 *
 * Each prints `ready` once it sends or listens; a sender prints its totals as JSON when it is done.
 */
import { Agent, createServer as createHttpServer, request } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';
import { countFrames, type FrameCount, journalBody, otlpBody, syslogLines } from './log-payloads.js';

/** What a sender sent: records and errors written (syslog) or in bodies answered 2xx (http), and the answers by status. */
export interface SenderTotals {
  records: number;
  errors: number;
  requests: number;
  statuses: Record<string, number>;
}

/** Buffers of lines each connection writes in turn: 25 of 2,000 lines cover the 500 hosts' errors once. */
const SYSLOG_BUFFERS = 25;
const SYSLOG_BUFFER_LINES = 2_000;
/** Distinct bodies an http sender posts in turn. */
const HTTP_BODIES = 10;

async function syslogSender(options: { port: number; connections: number; seconds: number; from: number; linesPerSecond?: number }): Promise<SenderTotals> {
  const timestamp = new Date().toISOString();
  const buffers = Array.from({ length: SYSLOG_BUFFERS }, (_, k) => syslogLines(options.from + k * SYSLOG_BUFFER_LINES, SYSLOG_BUFFER_LINES, timestamp));
  const totals: SenderTotals = { records: 0, errors: 0, requests: 0, statuses: {} };
  const sockets = await Promise.all(Array.from({ length: options.connections }, () => new Promise<Socket>((resolve, reject) => {
    const socket = connect(options.port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  })));
  console.log('ready');
  const until = performance.now() + options.seconds * 1000;
  await Promise.all(sockets.map((socket, k) => new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    let next = k;
    // Paced: each connection writes a buffer every `every` ms, all of them together `linesPerSecond`.
    const every = options.linesPerSecond === undefined ? undefined : (options.connections * SYSLOG_BUFFER_LINES * 1000) / options.linesPerSecond;
    const started = performance.now();
    let written = 0;
    const write = () => {
      // Whole buffers only, so that the lines and errors written are known exactly.
      while (performance.now() < until) {
        if (every !== undefined && performance.now() < started + written * every) return void setTimeout(write, started + written * every - performance.now());
        const buffer = buffers[next % SYSLOG_BUFFERS]!;
        next += 1;
        written += 1;
        totals.records += buffer.records;
        totals.errors += buffer.errors;
        if (!socket.write(buffer.bytes)) return void socket.once('drain', write);
      }
      socket.end(() => resolve());
    };
    write();
  })));
  return totals;
}

async function httpSender(options: { url: string; headers: Record<string, string>; kind: 'journald' | 'otlp'; concurrency: number; seconds: number; records: number; from: number }): Promise<SenderTotals> {
  const now = Date.now();
  const bodies = Array.from({ length: HTTP_BODIES }, (_, k) => {
    const first = options.from + k * options.records;
    return options.kind === 'journald' ? journalBody(first, options.records, now * 1000) : otlpBody(first, options.records, BigInt(now) * 1_000_000n);
  });
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const url = new URL(options.url);
  const totals: SenderTotals = { records: 0, errors: 0, requests: 0, statuses: {} };
  const post = (body: (typeof bodies)[number]) => new Promise<void>((resolve, reject) => {
    const sent = request(url, { method: 'POST', agent, headers: { ...options.headers, 'Content-Length': String(body.bytes.length) } }, (answer) => {
      answer.resume();
      answer.on('end', () => {
        const status = answer.statusCode ?? 0;
        totals.requests += 1;
        totals.statuses[status] = (totals.statuses[status] ?? 0) + 1;
        if (status >= 200 && status < 300) {
          totals.records += body.records;
          totals.errors += body.errors;
        }
        resolve();
      });
    });
    sent.on('error', reject);
    sent.end(body.bytes);
  });
  console.log('ready');
  const until = performance.now() + options.seconds * 1000;
  await Promise.all(Array.from({ length: options.concurrency }, async (_, k) => {
    for (let next = k; performance.now() < until; next += options.concurrency) await post(bodies[next % HTTP_BODIES]!);
  }));
  agent.destroy();
  return totals;
}

function tcpDiscard(options: { port: number; controlPort: number }): void {
  let frames = 0;
  createTcpServer((socket) => {
    const state: FrameCount = { frames: 0, skip: 0, length: 0 };
    let counted = 0;
    socket.on('data', (chunk: Buffer) => {
      countFrames(state, chunk);
      frames += state.frames - counted;
      counted = state.frames;
    });
    socket.on('error', () => undefined);
  }).listen(options.port, '127.0.0.1', () => {
    createTcpServer((socket) => socket.end(`${frames}\n`)).listen(options.controlPort, '127.0.0.1', () => console.log('ready'));
  });
}

function httpDiscard(options: { port: number }): void {
  let bodies = 0;
  createHttpServer((req, res) => {
    if (req.method === 'GET' && req.url === '/count') return void res.end(String(bodies));
    req.on('data', () => undefined);
    req.on('end', () => {
      bodies += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  }).listen(options.port, '127.0.0.1', () => console.log('ready'));
}

const [mode, json] = process.argv.slice(2);
// Written by tools/bench/logs.ts for the mode it names.
const options = JSON.parse(json ?? '{}') as never;
if (mode === 'syslog') console.log(JSON.stringify(await syslogSender(options)));
else if (mode === 'http') console.log(JSON.stringify(await httpSender(options)));
else if (mode === 'tcp-discard') tcpDiscard(options);
else if (mode === 'http-discard') httpDiscard(options);
else throw new Error(`log-senders.ts: no mode ${mode}; modes: syslog, http, tcp-discard, http-discard`);
