/**
 * The error tracker's figures and their goals (docs/benchmarks.md#errors), on one machine in one run:
 *  A. 100,000 reports of one error from 20 concurrent clients through two `cmi serve` processes
 *     sharing one database: one record, counter exactly 100,000 (SQLite; PostgreSQL when given).
 *  B. The same with one of the two processes killed with SIGKILL halfway: counter at least the 2xx
 *     answers and at most the reports sent (the clients of the dead process move to the other one).
 *  C. Durable ingestion, one process, on SQLite (and PostgreSQL when given): reports/s of one error and
 *     of distinct errors against their goals, the server's resident memory, and a raw node:http server
 *     reading a POST of the same size and answering cmi's bytes (the ceiling).
 *  D. Requests that fault (CMI_FAULT_INJECTION): capture on / capture off; the captured count checked
 *     against the 500s answered.
 *  E. The first page of the list on 100,000 errors, unfiltered and with each filter: the server's
 *     X-Runtime, median.
 *  F. Sentry ingestion (docs/sentry.md) on SQLite, one process: 25 KB gzip envelopes of one error
 *     through an ingest key, beside the native reports of C; events/s against its goal, the server's
 *     resident memory; the counter checked against the 2xx.
 * Part of `npm run bench` (`--only errors`; `--errors C,D` for some of the scenarios; `--postgres URL`
 * also on PostgreSQL, in a schema of its own, dropped after). A count that is not exact (A, B, D) is
 * put in `failures` (the suite then exits non-zero); a throughput or time target missed is reported.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningServer, startServer } from '../shared/server-process.js';
import { BASIC, type DatabaseKind, ERROR_CLASSES, freshDatabase, seedUsers, type SharedDatabases, withDatabase } from './datasets.js';
import { provenance, type RunInfo } from './document.js';
import { answerOf, startRawServer } from './raw-server.js';
import { cpuSeconds, fmt, median, residentMb, stop } from './support.js';
import { wrk } from './wrk.js';

export const ERROR_SCENARIOS = ['A', 'B', 'C', 'D', 'E', 'F'];

export interface ErrorsOptions {
  info: RunInfo;
  data: SharedDatabases;
  /** Also on PostgreSQL (A, B and E): the database this URL names. */
  postgres?: string;
  quick: boolean;
  /** Which of A-F. */
  scenarios: string[];
  /** Where a count that is not exact is said. */
  failures: string[];
}

/** Sizes and durations of one run: smaller with --quick (a check that it all runs, not figures). */
interface Run extends ErrorsOptions {
  /** Scenarios A and B. */
  storm: number;
  /** Scenarios C and D: wrk rounds. */
  rounds: number;
  seconds: number;
  /** Scenario D's exact check: faulting requests sent by a client that counts every answer. */
  faultCheck: number;
  /** Scenario E. */
  listErrors: number;
  listRequests: number;
}

const PORTS = [3311, 3312];
const RAW_PORT = 3313;
const BASE = '/sysadmin_tools/infrastructure/errors';
const STORM_CLIENTS = 20;
const INGEST_CONNECTIONS = 32;
const FAULT_CONNECTIONS = 16;

async function countersOf(url: string): Promise<Array<{ error_class: string; counter: number }>> {
  return withDatabase(url, async ({ db }) => {
    const rows = await db.selectFrom('infrastructure_errors').select(['error_class', 'counter']).execute();
    return rows.map((row) => ({ error_class: row.error_class, counter: Number(row.counter) }));
  });
}

/** A server of the bench: its own spool directory, no ingestion limit in the way. */
async function serve(url: string, port: number, cores: string, env: Record<string, string> = {}): Promise<RunningServer & { spool: string }> {
  const spool = mkdtempSync(join(tmpdir(), 'cmi-bench-spool-'));
  const server = await startServer({ DATABASE_URL: url, CMI_SPOOL_DIR: spool, CMI_ERRORS_RATE_LIMIT: '1000000', ...env }, [], { port, cores, program: 'built' });
  return Object.assign(server, { spool });
}

async function shutDown(server: RunningServer & { spool: string }): Promise<void> {
  await server.stop();
  rmSync(server.spool, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// A client that counts exactly: keep-alive connections over node:net, one request in flight on each,
// every request sent and every answer's status counted. A connection that breaks moves to the next
// server still alive; the request it had in flight counts as sent and unanswered.

interface DriveResult {
  sent: number;
  answered: number;
  ok: number;
  statuses: Map<number, number>;
  /** Sent, but the connection broke before the answer came. */
  unanswered: number;
  seconds: number;
}

interface DriveOptions {
  ports: number[];
  request: Buffer;
  total: number;
  concurrency: number;
  /** Called after each request is written, with how many are sent so far. */
  onSent?: (sent: number) => void;
}

function drive({ ports, request, total, concurrency, onSent }: DriveOptions): Promise<DriveResult> {
  const result: DriveResult = { sent: 0, answered: 0, ok: 0, statuses: new Map(), unanswered: 0, seconds: 0 };
  const dead = new Set<number>();
  const started = performance.now();

  const client = (first: number) =>
    new Promise<void>((resolve) => {
      const open = (index: number) => {
        const alive = ports.map((_, k) => (index + k) % ports.length).find((k) => !dead.has(ports[k] as number));
        if (alive === undefined || result.sent >= total) return resolve();
        const port = ports[alive] as number;
        const socket = connect(port, '127.0.0.1');
        socket.setNoDelay(true);
        let buffer: Buffer = Buffer.alloc(0);
        let inFlight = false;
        let answeredHere = 0;
        const next = () => {
          if (result.sent >= total) return void socket.end();
          result.sent++;
          inFlight = true;
          socket.write(request);
          onSent?.(result.sent);
        };
        socket.on('connect', next);
        socket.on('data', (chunk: Buffer) => {
          buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
          for (;;) {
            const headerEnd = buffer.indexOf('\r\n\r\n');
            if (headerEnd === -1) return;
            const head = buffer.toString('latin1', 0, headerEnd);
            const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1];
            if (length === undefined) throw new Error(`an answer without Content-Length:\n${head}`);
            const end = headerEnd + 4 + Number(length);
            if (buffer.length < end) return;
            const status = Number(head.slice(9, 12));
            buffer = buffer.subarray(end);
            inFlight = false;
            answeredHere++;
            result.answered++;
            if (status >= 200 && status < 300) result.ok++;
            result.statuses.set(status, (result.statuses.get(status) ?? 0) + 1);
            next();
          }
        });
        socket.on('error', () => {});
        socket.on('close', () => {
          if (inFlight) result.unanswered++;
          if (result.sent >= total && !inFlight) return resolve();
          // Broken before the end: that server is taken for dead (it refused, or it went away).
          if (answeredHere === 0 || inFlight) dead.add(port);
          open(alive + 1);
        });
      };
      open(first);
    });

  return Promise.all(Array.from({ length: concurrency }, (_, k) => client(k % ports.length))).then(() => {
    result.seconds = (performance.now() - started) / 1000;
    return result;
  });
}

function rawRequest(method: string, path: string, headers: Record<string, string>, body = ''): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  if (body !== '' || method === 'POST') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

const statusList = (statuses: Map<number, number>) => [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${fmt(count)} x ${status}`).join(', ');

/** The report body of scenario C: `tag` and `n` make the error class, fixed width (every body the same size). */
const REPORT_TEMPLATE =
  '{"infrastructure_error":{"error_class":"BenchError_%s_%08d","message":"connection refused by storage node",' +
  '"backtrace":["app/storage/client.js:42:in connect","app/jobs/poll.js:7:in run"],"host":"bench-host","component":"storage"}}';
const reportBody = (tag: string, n: number) => REPORT_TEMPLATE.replace('%s', tag).replace('%08d', String(n).padStart(8, '0'));

/** A Lua script for wrk: POST `body` to every request (one error), or a new error class each request. */
function luaScript(dir: string, name: string, distinct: boolean): string {
  const lines = [
    'wrk.method = "POST"',
    'wrk.headers["Content-Type"] = "application/json"',
    `wrk.headers["Authorization"] = "${BASIC}"`,
  ];
  if (distinct) {
    lines.push(
      `local template = [[${REPORT_TEMPLATE}]]`,
      'local tag = "xx"',
      'local n = 0',
      'function init(args) tag = args[1] end',
      'function request()',
      '  n = n + 1',
      '  return wrk.format(nil, nil, nil, string.format(template, tag, n))',
      'end',
    );
  } else {
    lines.push(`wrk.body = [[${reportBody('oo', 0)}]]`);
  }
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

// ---------------------------------------------------------------------------------------------
// A and B: a storm of one error through two processes.

interface StormOutcome {
  sent: number;
  ok: number;
  unanswered: number;
  statuses: Map<number, number>;
  seconds: number;
  records: number;
  counter: number;
}

async function storm(run: Run, kind: DatabaseKind, killHalfway: boolean): Promise<StormOutcome> {
  const database = await freshDatabase(kind, run.postgres);
  try {
    await seedUsers(database.url, 1);
    const servers = [await serve(database.url, PORTS[0] as number, '0'), await serve(database.url, PORTS[1] as number, '1')];
    try {
      const body = JSON.stringify({ infrastructure_error: { error_class: 'BenchStorm', message: 'storage node 7 is not answering', backtrace: ['app/storage/client.js:42:in connect'], host: 'bench-host' } });
      const request = rawRequest('POST', `${BASE}.json`, { Authorization: BASIC, 'Content-Type': 'application/json' }, body);
      const victim = servers[1] as RunningServer;
      const result = await drive({
        ports: PORTS,
        request,
        total: run.storm,
        concurrency: STORM_CLIENTS,
        onSent: killHalfway ? (sent) => sent === run.storm / 2 && victim.child.kill('SIGKILL') : undefined,
      });
      for (const server of servers) await shutDown(server);
      const rows = await countersOf(database.url);
      return { ...result, records: rows.length, counter: rows.reduce((sum, row) => sum + row.counter, 0) };
    } finally {
      for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) await shutDown(server);
    }
  } finally {
    await database.drop();
  }
}

async function storms(run: Run, kind: DatabaseKind, label: string): Promise<string> {
  const clean = await storm(run, kind, false);
  const exact = clean.records === 1 && clean.counter === run.storm && clean.ok === run.storm;
  if (!exact) run.failures.push(`A on ${label}: ${clean.records} records, counter ${clean.counter}, ${clean.ok} 2xx of ${run.storm}`);
  const killed = await storm(run, kind, true);
  const bounded = killed.records === 1 && killed.counter >= killed.ok && killed.counter <= killed.sent;
  if (!bounded) run.failures.push(`B on ${label}: ${killed.records} records, counter ${killed.counter} not within ${killed.ok} 2xx .. ${killed.sent} sent`);
  const table = [
    '| run | sent | 2xx | unanswered | records | counter | check | time, s | reports/s |',
    '|---|---|---|---|---|---|---|---|---|',
    `| A: both processes live | ${fmt(clean.sent)} | ${fmt(clean.ok)} | ${fmt(clean.unanswered)} | ${clean.records} | ${fmt(clean.counter)} | ${exact ? 'exact' : '**NOT EXACT**'} | ${clean.seconds.toFixed(1)} | ${fmt(clean.ok / clean.seconds)} |`,
    `| B: one killed (SIGKILL) at ${fmt(run.storm / 2)} sent | ${fmt(killed.sent)} | ${fmt(killed.ok)} | ${fmt(killed.unanswered)} | ${killed.records} | ${fmt(killed.counter)} | ${bounded ? '2xx <= counter <= sent' : '**OUT OF BOUNDS**'} | ${killed.seconds.toFixed(1)} | ${fmt(killed.ok / killed.seconds)} |`,
  ].join('\n');
  const notes = [clean, killed].map((run, k) => `${k === 0 ? 'A' : 'B'}: ${statusList(run.statuses)}`).join('; ');
  return `${label}:\n\n${table}\n\nAnswers: ${notes}.`;
}

// ---------------------------------------------------------------------------------------------
// C: durable ingestion, one process, on SQLite and on PostgreSQL.

/** The figures to reach (reports/s answered 2xx after their commit), by database. */
const INGESTION_GOALS: Record<DatabaseKind, { one: number; distinct: number }> = {
  sqlite: { one: 10_000, distinct: 5_000 },
  postgres: { one: 5_000, distinct: 3_000 },
};
/** Sentry envelopes of 25 KB gzip, events/s on SQLite (scenario F). */
const SENTRY_GOAL = 1_000;
/** The most memory a process may hold while it ingests, MB resident. */
const RSS_GOAL_MB = 300;

const verdict = (rate: number, goal: number) => (rate >= goal ? 'reached' : `**missed** by ${fmt(goal - rate)}/s (${((rate / goal) * 100).toFixed(0)}% of it)`);
const spread = (values: number[]) => `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}`;

/** The server's resident memory: the peak so far (VmHWM) and now (VmRSS), and the line that says it against the goal. */
function memoryLine(pid: number, afterRuns: number[]): string {
  const peak = residentMb(pid, 'VmHWM');
  return `- Memory of the server (/proc/PID/status): peak resident **${peak.toFixed(0)} MB** (VmHWM, from its start to the last run), ` +
    `resident after each run ${afterRuns.map((mb) => mb.toFixed(0)).join(', ')} MB (VmRSS) ` +
    `(goal: at most ${RSS_GOAL_MB} MB during ingestion: ${peak <= RSS_GOAL_MB ? 'reached' : `**missed** by ${(peak - RSS_GOAL_MB).toFixed(0)} MB`}).`;
}

async function ingestion(run: Run, work: string, kind: DatabaseKind): Promise<string> {
  const database = await freshDatabase(kind, run.postgres);
  const goals = INGESTION_GOALS[kind];
  try {
    await seedUsers(database.url, 1);
    const server = await serve(database.url, PORTS[0] as number, '0');
    let raw: ChildProcess | undefined;
    try {
      const oneScript = luaScript(work, 'one.lua', false);
      const distinctScript = luaScript(work, 'distinct.lua', true);
      // cmi's answer to a report of a known error: the bytes the raw server answers with.
      const post = () => fetch(`http://127.0.0.1:${PORTS[0]}${BASE}.json`, { method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/json' }, body: reportBody('oo', 0) });
      await (await post()).arrayBuffer();
      const answer = await answerOf(await post());
      if (answer.status !== 200) throw new Error(`a report answered ${answer.status}: ${answer.body}`);
      raw = await startRawServer(answer, { port: RAW_PORT, cores: '0', readBody: true });

      const cmiUrl = `http://127.0.0.1:${PORTS[0]}${BASE}.json`;
      const serverPid = server.child.pid as number;
      const targets: Array<{ name: string; url: string; script: string; distinct: boolean; pid: number }> = [
        { name: 'raw node:http, same request and answer bytes', url: `http://127.0.0.1:${RAW_PORT}${BASE}.json`, script: oneScript, distinct: false, pid: raw.pid as number },
        { name: 'cmi, one error', url: cmiUrl, script: oneScript, distinct: false, pid: serverPid },
        { name: 'cmi, distinct errors (a new error class each report)', url: cmiUrl, script: distinctScript, distinct: true, pid: serverPid },
      ];
      const runOne = (target: (typeof targets)[number], tag: string, seconds: number) =>
        wrk(target.url, { script: target.script, scriptArgs: target.distinct ? [tag] : undefined, seconds, connections: INGEST_CONNECTIONS, cores: '1' });
      const answered = { one: 2, distinct: 0 };
      for (const target of targets) {
        const warm = runOne(target, 'w0', 2);
        if (target.url === cmiUrl) answered[target.distinct ? 'distinct' : 'one'] += warm.requests - warm.non2xx;
      }
      const rates = new Map<string, number[]>(targets.map((target) => [target.name, []]));
      const cpu = new Map<string, number[]>(targets.map((target) => [target.name, []]));
      const refused = new Map<string, number>(targets.map((target) => [target.name, 0]));
      const resident: number[] = [];
      for (let round = 0; round < run.rounds; round++) {
        for (const target of targets) {
          const before = cpuSeconds(target.pid);
          const result = runOne(target, `r${round}`, run.seconds);
          cpu.get(target.name)?.push(((cpuSeconds(target.pid) - before) / result.requests) * 1e6);
          rates.get(target.name)?.push(result.requestsPerSecond);
          refused.set(target.name, (refused.get(target.name) ?? 0) + result.non2xx);
          if (target.url === cmiUrl) {
            answered[target.distinct ? 'distinct' : 'one'] += result.requests - result.non2xx;
            resident.push(residentMb(serverPid, 'VmRSS'));
          }
        }
      }
      const memory = memoryLine(serverPid, resident);
      await stop(raw);
      raw = undefined;
      await shutDown(server);
      const rows = await countersOf(database.url);
      const oneCounter = rows.find((row) => row.error_class === 'BenchError_oo_00000000')?.counter ?? 0;
      const distinctRows = rows.filter((row) => row.error_class !== 'BenchError_oo_00000000');

      const rawRates = rates.get(targets[0]!.name)!;
      const oneRate = median(rates.get(targets[1]!.name)!);
      const distinctRate = median(rates.get(targets[2]!.name)!);
      const rows2 = targets.map((target) => {
        const rate = median(rates.get(target.name)!);
        // The median of the rounds' ratios: each round's runs are seconds apart, so the machine's mood cancels out.
        const ratio = median(rates.get(target.name)!.map((value, k) => value / (rawRates[k] as number)));
        const micros = median(cpu.get(target.name)!);
        return `| ${target.name} | ${fmt(rate)} | ${spread(rates.get(target.name)!)} | ${ratio.toFixed(2)}x | ${micros.toFixed(0)} | ${fmt(1e6 / micros)} | ${fmt(refused.get(target.name) ?? 0)} | ${rates.get(target.name)!.map(fmt).join(', ')} |`;
      });
      return [
        '| target | requests/s (median) | spread | vs raw | server CPU µs/request | 1 / CPU per request | non-2xx | rounds (requests/s) |',
        '|---|---|---|---|---|---|---|---|',
        ...rows2,
        '',
        `- One error: **${fmt(oneRate)}/s** (goal: at least ${fmt(goals.one)}/s: ${verdict(oneRate, goals.one)}); ` +
          `at its server CPU per request a core to itself would answer at most ${fmt(1e6 / median(cpu.get(targets[1]!.name)!))}/s.`,
        `- Distinct errors: **${fmt(distinctRate)}/s** (goal: at least ${fmt(goals.distinct)}/s: ${verdict(distinctRate, goals.distinct)}); ` +
          `at most ${fmt(1e6 / median(cpu.get(targets[2]!.name)!))}/s by its CPU per request.`,
        memory,
        `- Stored afterwards: the one error's counter ${fmt(oneCounter)} for ${fmt(answered.one)} 2xx answers wrk read; ` +
          `${fmt(distinctRows.length)} distinct records (counters summing to ${fmt(distinctRows.reduce((sum, row) => sum + row.counter, 0))}) ` +
          `for ${fmt(answered.distinct)} 2xx answers. The excess is what wrk had in flight when each run stopped: written, never read.`,
      ].join('\n');
    } finally {
      if (raw) await stop(raw);
      if (server.child.exitCode === null && server.child.signalCode === null) await shutDown(server);
    }
  } finally {
    await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// F: Sentry envelopes, one process on SQLite.

/**
 * An envelope as @sentry/node sends one (an event with 40 frames and breadcrumbs, a session and a
 * client report beside it), grown with pseudo-random breadcrumbs until it is `bytes` gzipped. No
 * event id: each one is a new event of the same error.
 */
export function sentryEnvelope(bytes: number): Buffer {
  let seed = 7;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed.toString(16).padStart(8, '0');
  };
  const frames = Array.from({ length: 40 }, (_, k) => ({ filename: k < 30 ? `/srv/app/node_modules/lib${k}/index.js` : `/srv/app/src/module${k}.js`, function: `step${k}`, lineno: 10 + k, colno: 5, in_app: k >= 30 }));
  const breadcrumbs: Array<Record<string, unknown>> = [];
  const make = () => {
    const event = {
      timestamp: 1795168790.25, platform: 'node', level: 'error', server_name: 'bench-host', release: 'bench@1.0.0', environment: 'bench',
      sdk: { name: 'sentry.javascript.node', version: '11.12.0' }, tags: { component: 'storage' },
      exception: { values: [{ type: 'StorageError', value: 'connection refused by storage node', stacktrace: { frames } }] },
      breadcrumbs,
    };
    const text = [
      '{"sent_at":"2026-11-20T10:00:00.000Z","sdk":{"name":"sentry.javascript.node","version":"11.12.0"}}',
      '{"type":"event"}', JSON.stringify(event),
      '{"type":"session"}', '{"sid":"5d1f2c0a9b8e4f7d8c6b5a4f3e2d1c0b","status":"ok","errors":1}',
      '{"type":"client_report"}', '{"discarded_events":[]}',
    ].join('\n');
    return gzipSync(`${text}\n`);
  };
  let body = make();
  while (body.length < bytes) {
    for (let k = 0; k < 10; k++) breadcrumbs.push({ timestamp: 1795168790 + breadcrumbs.length, category: 'http', message: `GET /objects/${random()}${random()}${random()}${random()}` });
    body = make();
  }
  return body;
}

async function sentryIngestion(run: Run, work: string): Promise<string> {
  const database = await freshDatabase('sqlite');
  try {
    await seedUsers(database.url, 1);
    const server = await serve(database.url, PORTS[0] as number, '0');
    try {
      const base = `http://127.0.0.1:${PORTS[0]}`;
      const made = await fetch(`${base}/sysadmin_tools/infrastructure/ingest_keys.json`, {
        method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/json' }, body: JSON.stringify({ ingest_key: { label: 'bench', rate_limit_per_minute: 1_000_000 } }),
      });
      const key = ((await made.json()) as { ingest_key: { id: number; public_key: string } }).ingest_key;
      const envelope = sentryEnvelope(25_000);
      const envelopeFile = join(work, 'envelope.gz');
      writeFileSync(envelopeFile, envelope);
      const sentryScript = join(work, 'sentry.lua');
      writeFileSync(sentryScript, [
        'wrk.method = "POST"',
        'wrk.headers["Content-Encoding"] = "gzip"',
        `local f = assert(io.open("${envelopeFile}", "rb"))`,
        'wrk.body = f:read("*a")',
        'f:close()',
        '',
      ].join('\n'));
      const first = await fetch(`${base}/api/${key.id}/envelope/?sentry_key=${key.public_key}`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body: envelope });
      if (first.status !== 200) throw new Error(`an envelope answered ${first.status}: ${await first.text()}`);
      const targets = [
        { name: 'native report (C\'s one error, JSON)', url: `${base}${BASE}.json`, script: luaScript(work, 'one.lua', false) },
        { name: `Sentry envelope, ${fmt(envelope.length)} bytes gzip`, url: `${base}/api/${key.id}/envelope/?sentry_key=${key.public_key}`, script: sentryScript },
      ];
      const rates = new Map<string, number[]>(targets.map((target) => [target.name, []]));
      const cpu = new Map<string, number[]>(targets.map((target) => [target.name, []]));
      const refused = new Map<string, number>(targets.map((target) => [target.name, 0]));
      let sentryAnswered = 1;
      const resident: number[] = [];
      for (let round = -1; round < run.rounds; round++) {
        for (const target of targets) {
          const before = cpuSeconds(server.child.pid as number);
          const result = wrk(target.url, { script: target.script, seconds: round < 0 ? 2 : run.seconds, connections: INGEST_CONNECTIONS, cores: '1' });
          if (target === targets[1]) sentryAnswered += result.requests - result.non2xx;
          if (round < 0) continue;
          cpu.get(target.name)?.push(((cpuSeconds(server.child.pid as number) - before) / result.requests) * 1e6);
          rates.get(target.name)?.push(result.requestsPerSecond);
          refused.set(target.name, (refused.get(target.name) ?? 0) + result.non2xx);
          resident.push(residentMb(server.child.pid as number, 'VmRSS'));
        }
      }
      const memory = memoryLine(server.child.pid as number, resident);
      await shutDown(server);
      const counter = (await countersOf(database.url)).find((row) => row.error_class === 'StorageError')?.counter ?? 0;
      if (counter < sentryAnswered) run.failures.push(`F: StorageError counter ${counter} for ${sentryAnswered} envelopes answered 200`);
      const events = median(rates.get(targets[1]!.name)!);
      return [
        '| target | requests/s (median) | spread | server CPU µs/request | non-2xx | rounds (requests/s) |',
        '|---|---|---|---|---|---|',
        ...targets.map((target) => `| ${target.name} | ${fmt(median(rates.get(target.name)!))} | ${spread(rates.get(target.name)!)} | ${median(cpu.get(target.name)!).toFixed(0)} | ${fmt(refused.get(target.name) ?? 0)} | ${rates.get(target.name)!.map(fmt).join(', ')} |`),
        '',
        `- Sentry events (one event an envelope): **${fmt(events)}/s** (goal: at least ${fmt(SENTRY_GOAL)}/s: ${verdict(events, SENTRY_GOAL)}); ` +
          `at its server CPU per envelope a core to itself would take at most ${fmt(1e6 / median(cpu.get(targets[1]!.name)!))}/s.`,
        memory,
        `- Stored afterwards: the Sentry error's counter ${fmt(counter)} for ${fmt(sentryAnswered)} 200 answers wrk read (the excess: what was in flight when each run stopped).`,
      ].join('\n');
    } finally {
      if (server.child.exitCode === null && server.child.signalCode === null) await shutDown(server);
    }
  } finally {
    await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// D: faulting requests, capture on and off.

async function faults(run: Run): Promise<string> {
  const capturing = await freshDatabase('sqlite');
  const uncaptured = await freshDatabase('sqlite');
  const checked = await freshDatabase('sqlite');
  try {
    for (const database of [capturing, uncaptured, checked]) await seedUsers(database.url, 1);
    const capture = await serve(capturing.url, PORTS[0] as number, '0', { CMI_FAULT_INJECTION: 'capture' });
    const plain = await serve(uncaptured.url, PORTS[1] as number, '0', { CMI_FAULT_INJECTION: 'uncaptured' });
    const headers = { Authorization: BASIC, 'X-Cmi-Inject-Fault': '1' };
    const targets = [
      { name: 'CMI_FAULT_INJECTION=uncaptured', url: `http://127.0.0.1:${PORTS[1]}/version.json`, pid: plain.child.pid as number },
      { name: 'CMI_FAULT_INJECTION=capture', url: `http://127.0.0.1:${PORTS[0]}/version.json`, pid: capture.child.pid as number },
    ];
    const cpu = new Map<string, number[]>(targets.map((target) => [target.name, []]));
    let captured500s = 0;
    let capturedAnswers = 0;
    const rates = new Map<string, number[]>(targets.map((target) => [target.name, []]));
    try {
      for (let round = -1; round < run.rounds; round++) {
        for (const target of targets) {
          const before = cpuSeconds(target.pid);
          const result = wrk(target.url, { headers, seconds: round < 0 ? 2 : run.seconds, connections: FAULT_CONNECTIONS, cores: '1' });
          if (result.non2xx !== result.requests) throw new Error(`${target.name}: ${result.requests - result.non2xx} answers were not faults`);
          if (round >= 0) {
            rates.get(target.name)?.push(result.requestsPerSecond);
            cpu.get(target.name)?.push(((cpuSeconds(target.pid) - before) / result.requests) * 1e6);
          }
          if (target === targets[1]) {
            captured500s += result.non2xx;
            capturedAnswers += result.requests;
          }
        }
      }
    } finally {
      await shutDown(capture);
      await shutDown(plain);
    }
    const wrkCounter = (await countersOf(capturing.url)).find((row) => row.error_class === 'InjectedFault')?.counter ?? 0;
    const uncapturedRecords = (await countersOf(uncaptured.url)).length;

    // The exact check: a client that reads every answer, so nothing is left in flight at the end.
    const server = await serve(checked.url, PORTS[0] as number, '0', { CMI_FAULT_INJECTION: 'capture' });
    let exact: DriveResult;
    try {
      exact = await drive({ ports: [PORTS[0] as number], request: rawRequest('GET', '/version.json', headers), total: run.faultCheck, concurrency: FAULT_CONNECTIONS });
    } finally {
      await shutDown(server);
    }
    const exactCounter = (await countersOf(checked.url)).find((row) => row.error_class === 'InjectedFault')?.counter ?? 0;
    const fives = exact.statuses.get(500) ?? 0;
    if (exactCounter !== fives || fives !== run.faultCheck) run.failures.push(`D: InjectedFault counter ${exactCounter} for ${fives} answers 500 of ${run.faultCheck} sent`);
    if (wrkCounter < captured500s || wrkCounter > captured500s + FAULT_CONNECTIONS * (run.rounds + 1)) {
      run.failures.push(`D: InjectedFault counter ${wrkCounter} after wrk read ${captured500s} answers 500 (at most ${FAULT_CONNECTIONS} in flight at each of ${run.rounds + 1} stops)`);
    }
    if (uncapturedRecords !== 0) run.failures.push(`D: ${uncapturedRecords} records with capture off`);

    // The median of the rounds' ratios (each round's two runs are seconds apart).
    const uncapturedRates = rates.get(targets[0]!.name)!;
    const roundRatios = rates.get(targets[1]!.name)!.map((rate, k) => rate / (uncapturedRates[k] as number));
    const ratio = median(roundRatios);
    const cpuRatio = median(cpu.get(targets[0]!.name)!) / median(cpu.get(targets[1]!.name)!);
    return [
      '| server | requests/s (all 500) | server CPU µs/request | rounds (requests/s) |',
      '|---|---|---|---|',
      ...targets.map((target) => `| ${target.name} | ${fmt(median(rates.get(target.name)!))} | ${median(cpu.get(target.name)!).toFixed(0)} | ${rates.get(target.name)!.map(fmt).join(', ')} |`),
      '',
      `- capture / uncaptured: **${ratio.toFixed(2)}x**, the median of the rounds' ratios (${roundRatios.map((r) => r.toFixed(2)).join(', ')}) ` +
        `(goal: at least 0.8x: ${ratio >= 0.8 ? 'reached' : `**missed** by ${(0.8 - ratio).toFixed(2)}`}); by server CPU per request: ${cpuRatio.toFixed(2)}x.`,
      `- Counted exactly: a client reading every answer sent ${fmt(run.faultCheck)} faulting requests to a capturing server, ` +
        `${fmt(fives)} answered 500; after SIGTERM the InjectedFault record's counter is **${fmt(exactCounter)}** ` +
        `(${exactCounter === fives ? 'equal' : '**NOT EQUAL**'}).`,
      `- After the wrk runs above (SIGTERM): counter ${fmt(wrkCounter)} for ${fmt(captured500s)} answers 500 wrk read ` +
        `(${fmt(capturedAnswers)} answers in all): ${fmt(wrkCounter - captured500s)} more, the requests wrk had in flight when its ${run.rounds + 1} runs stopped ` +
        `(at most ${FAULT_CONNECTIONS} each). With capture off: ${uncapturedRecords} records.`,
    ].join('\n');
  } finally {
    for (const database of [capturing, uncaptured, checked]) await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// E: the list's first page on 100,000 errors.

async function listing(run: Run, kind: DatabaseKind): Promise<string> {
  // The suite's shared database of this kind (tools/bench/datasets.ts): seeded once for every section.
  const shared = await run.data.get(kind, { users: 1, errors: run.listErrors });
  const now = shared.errorsSeededAt as Date;
  const server = await serve(shared.url, PORTS[0] as number, '0');
  try {
    const since = new Date(now.getTime() - 3_600_000).toISOString();
    const queries: Array<[string, string]> = [
      ['unfiltered', ''],
      ['`reported=false`', 'reported=false'],
      [`\`error_class=${ERROR_CLASSES[7]}\``, `error_class=${ERROR_CLASSES[7]}`],
      ['`host=hv-17`', 'host=hv-17'],
      ['`component=storage`', 'component=storage'],
      ['`since=<an hour ago>`', `since=${encodeURIComponent(since)}`],
      ['`q=deadlock`', 'q=deadlock'],
    ];
    const ask = async (query: string) => {
      const res = await fetch(`http://127.0.0.1:${PORTS[0]}${BASE}.json${query ? `?${query}` : ''}`, { headers: { authorization: BASIC } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${query}: ${res.status}`);
      return { ms: Number(res.headers.get('x-runtime')) * 1000, total: Number(res.headers.get('x-total')) };
    };
    // Warm-up: every query, so V8 has compiled each path and the database's pages are cached.
    for (let k = 0; k < 20; k++) for (const [, query] of queries) await ask(query);
    const rows: string[] = [];
    for (const [name, query] of queries) {
      const times: number[] = [];
      let total = 0;
      for (let k = 0; k < run.listRequests; k++) {
        const answer = await ask(query);
        times.push(answer.ms);
        total = answer.total;
      }
      const sorted = [...times].sort((a, b) => a - b);
      const p90 = sorted[Math.floor(sorted.length * 0.9)] as number;
      const mid = median(times);
      rows.push(`| ${name} | ${fmt(total)} | ${mid.toFixed(2)} | ${p90.toFixed(2)} | ${mid < 5 ? 'yes' : `**no** (+${(mid - 5).toFixed(2)} ms)`} |`);
    }
    return [
      `${fmt(shared.errors)} errors seeded in ${(shared.errorsSeedSeconds as number).toFixed(1)} s, in a database of ${fmt(shared.users)} user${shared.users === 1 ? '' : 's'}.`,
      '',
      '| first page (25) | X-Total | median ms | 90th percentile ms | under 5 ms |',
      '|---|---|---|---|---|',
      ...rows,
    ].join('\n');
  } finally {
    await shutDown(server);
  }
}

// ---------------------------------------------------------------------------------------------

export async function errorsSection(options: ErrorsOptions): Promise<string> {
  const quick = options.quick;
  const run: Run = {
    ...options,
    storm: quick ? 20_000 : 100_000,
    rounds: 3,
    seconds: quick ? 2 : 4,
    faultCheck: quick ? 5_000 : 20_000,
    listErrors: quick ? 10_000 : 100_000,
    listRequests: quick ? 50 : 200,
  };
  const only = new Set(options.scenarios);
  const work = mkdtempSync(join(tmpdir(), 'cmi-bench-errors-work-'));
  const sections: string[] = [];
  const section = (text: string) => {
    console.log(`${text}\n`);
    sections.push(text);
  };
  const started = performance.now();
  try {
    if (only.has('A') || only.has('B')) {
      section(`### A and B: ${fmt(run.storm)} reports of one error, ${STORM_CLIENTS} clients, two processes, one database\n\n${await storms(run, 'sqlite', 'SQLite')}`);
      if (run.postgres) section(await storms(run, 'postgres', 'PostgreSQL'));
    }
    if (only.has('C')) {
      section(`### C: durable ingestion, one process\n\nSQLite:\n\n${await ingestion(run, work, 'sqlite')}`);
      if (run.postgres) section(`PostgreSQL:\n\n${await ingestion(run, work, 'postgres')}`);
    }
    if (only.has('D')) section(`### D: requests that fault, SQLite\n\n${await faults(run)}`);
    if (only.has('E')) {
      section(`### E: the list's first page on ${fmt(run.listErrors)} errors\n\nSQLite:\n\n${await listing(run, 'sqlite')}`);
      if (run.postgres) section(`PostgreSQL:\n\n${await listing(run, 'postgres')}`);
    }
    if (only.has('F')) section(`### F: Sentry ingestion, one process, SQLite\n\n${await sentryIngestion(run, work)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  return `
## Error tracker

${provenance(options.info)} Scenarios ${[...only].join(', ')}; ${run.postgres ? 'SQLite and PostgreSQL (a schema of its own)' : 'SQLite only (PostgreSQL: give `--postgres URL`)'}; ${((performance.now() - started) / 1000).toFixed(0)} s in all.
Every server is what \`npm start\` runs (bin/cmi.js and dist/, compiled by the run), with \`CMI_ERRORS_RATE_LIMIT=1000000\` (the per-credential limit is not what is measured).

A and B: two \`cmi serve\` processes on one database, pinned to core 0 and core 1; ${STORM_CLIENTS} keep-alive
clients of this process's own (one request in flight each, every answer read and counted), half on each
server. In B the second process is killed with SIGKILL when the ${fmt(run.storm / 2)}th report is sent; its clients move
to the survivor. "unanswered": sent, connection broken before the answer. The counter is read from the
database after both processes stopped.

C and D: server pinned to core 0, wrk (1 thread, ${INGEST_CONNECTIONS} connections in C, ${FAULT_CONNECTIONS} in D, ${run.seconds} s,
median of ${run.rounds} rounds with their spread (lowest–highest), the targets taking turns) to core 1. C posts
\`${reportBody('oo', 0)}\` (${Buffer.byteLength(reportBody('oo', 0))} bytes),
with a Lua counter in \`error_class\` for distinct errors; each 2xx means the report's transaction committed
(group commit: on PostgreSQL a commit that survives a crash of the machine, on SQLite, WAL with
\`synchronous = NORMAL\`, one that survives a crash of cmi: docs/api.md). Goals (reports/s, one process):
SQLite ${fmt(INGESTION_GOALS.sqlite.one)} of one error and ${fmt(INGESTION_GOALS.sqlite.distinct)} of distinct errors, PostgreSQL
${fmt(INGESTION_GOALS.postgres.one)} and ${fmt(INGESTION_GOALS.postgres.distinct)}; at most ${RSS_GOAL_MB} MB resident (VmHWM of the server
process, read after the last run: its peak). D asks \`GET /version.json\` with Basic auth and \`X-Cmi-Inject-Fault: 1\`. "server CPU µs/request":
user + system time of the server process over the requests wrk read; "1 / CPU per request": the most a core
to itself could answer at that cost. Other work on this shared VM moves requests/s between runs far more
than it moves CPU per request.

F: as C, the server on core 0 and wrk on core 1, taking turns: C's native report of one error, and a
Sentry envelope as @sentry/node sends one (an event with 40 frames and breadcrumbs, a session, a client report),
gzipped to 25 KB, posted to \`/api/<id>/envelope/?sentry_key=...\` with \`Content-Encoding: gzip\` (no event id:
each is a new occurrence of one error, decompressed, read and recorded through the same group commit).
Goal: at least ${fmt(SENTRY_GOAL)} events/s (GlitchTip serves about 300–450 requests/s of such envelopes on 2 CPUs, Bugsink
about 30 events/s), at most ${RSS_GOAL_MB} MB resident.

E: errors seeded through the repository (\`recordBatch\`, 1,000 a batch) over the last 30 days, 20 classes,
50 hosts, 5 components, 10 message words, a third reported (tools/bench/datasets.ts, the database the throughput
figures use too); then the server's X-Runtime of ${run.listRequests} sequential requests of each first page (25 a
page, newest \`updated_at\` first), after 20 of each as warm-up. The list renders every request afresh (no page
cache for errors).

${sections.join('\n\n')}
${options.failures.length > 0 ? `\n**Counts not exact:** ${options.failures.join('; ')}.\n` : ''}`;
}
