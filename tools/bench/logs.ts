/**
 * The log sources' figures (docs/benchmarks.md#logs, docs/log-sources.md#speed): one `cmi serve`
 * (dist/) pinned to core 0 with a TCP syslog listener, its load from processes of their own pinned to
 * core 1 (tools/bench/log-senders.ts):
 *  - syslog: TCP connections writing octet-counted RFC 5424 lines as fast as the kernel takes them, 1%
 *    at err; lines/s read from cmi_log_records_total{source="syslog"} over the window; meanwhile the
 *    HTTP API's p99 (wrk, paced) against the same when idle; after the rounds, once cmi drained, the
 *    errors' counters added up against the err lines written (a difference goes to `failures`);
 *  - journald and OTLP: bodies of 1,000 records (1% errors) posted a few at a time; records/s from
 *    cmi_log_records_total{source}; the counters against the errors of the bodies answered 2xx.
 * Each against a reference on the same core, fed by the same senders in the same round, that only
 * reads and discards the same bytes (a node:net server counting frames, a node:http server).
 * Part of `npm run bench` (`--only logs`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningServer, startServer } from '../shared/server-process.js';
import { BASIC, freshDatabase, seedUsers } from './datasets.js';
import { provenance, type RunInfo } from './document.js';
import type { SenderTotals } from './log-senders.js';
import { cpuSeconds, fmt, median, residentMb, ROOT, stop } from './support.js';
import { wrk } from './wrk.js';

export interface LogsOptions {
  info: RunInfo;
  quick: boolean;
  rounds: number;
  seconds: number;
  /** Where a count that is not exact is said. */
  failures: string[];
}

const PORT = 3351;
const SYSLOG_PORT = 3352;
const TCP_REFERENCE_PORT = 3353;
const TCP_REFERENCE_CONTROL_PORT = 3354;
const HTTP_REFERENCE_PORT = 3355;
const METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef';
/** The sender processes of each run, and each one's TCP connections (syslog) or requests in flight (journald, OTLP). */
const SENDERS = 2;
const SYSLOG_CONNECTIONS = 2;
const HTTP_CONCURRENCY = 2;
const BODY_RECORDS = 1_000;
/** Seconds the senders run before the window opens (connections made, V8 warm). */
const WARM_SECONDS = 1;
/** The HTTP API's probe during the syslog load: wrk with this many connections, each waiting this long between requests. */
const PROBE_CONNECTIONS = 4;
const PROBE_DELAY_MS = 10;
const GOALS = { syslog: 100_000, journald: 20_000, otlp: 20_000 } as const;
const P99_GOAL = 2;
const ERRORS = '/sysadmin_tools/infrastructure/errors.json';

type Source = keyof typeof GOALS;

interface Started {
  child: ChildProcess;
  ready: Promise<void>;
  /** The totals it printed (senders), when it exited. */
  done: Promise<SenderTotals | undefined>;
}

/** log-senders.ts in `mode`, pinned to `cores`: ready once it prints `ready`, done with the JSON it prints last. */
function startHelper(mode: string, options: object, cores: string): Started {
  const child = spawn('taskset', ['-c', cores, process.execPath, '--import', 'tsx', join(ROOT, 'tools/bench/log-senders.ts'), mode, JSON.stringify(options)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  let readyNow: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (readyNow = resolve));
  child.stdout?.on('data', (chunk) => {
    output += chunk;
    if (output.startsWith('ready\n')) readyNow();
  });
  const done = new Promise<SenderTotals | undefined>((resolve, reject) => child.on('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') return reject(new Error(`log-senders.ts ${mode} exited with ${code ?? signal}: ${output}`));
    const last = output.trim().split('\n').at(-1) ?? '';
    resolve(last.startsWith('{') ? (JSON.parse(last) as SenderTotals) : undefined);
  }));
  // An exit before `ready` is an error the caller sees through `ready`.
  void done.catch(() => undefined);
  return { child, ready: Promise.race([ready, done.then(() => Promise.reject(new Error(`log-senders.ts ${mode} exited before it was ready: ${output}`)))]), done };
}

/** `SENDERS` processes of `mode` on core 1, each with its own records (`from`); resolves when all are sending. */
async function startSenders(mode: 'syslog' | 'http', options: object, round: number): Promise<Started[]> {
  const senders = Array.from({ length: SENDERS }, (_, k) => startHelper(mode, { ...options, from: (round * SENDERS + k) * 10_000_000 }, '1'));
  await Promise.all(senders.map((sender) => sender.ready));
  return senders;
}

async function totalsOf(senders: Started[]): Promise<SenderTotals> {
  const all = await Promise.all(senders.map((sender) => sender.done));
  const sum: SenderTotals = { records: 0, errors: 0, requests: 0, statuses: {} };
  for (const one of all) {
    if (one === undefined) throw new Error('a sender printed no totals');
    sum.records += one.records;
    sum.errors += one.errors;
    sum.requests += one.requests;
    for (const [status, count] of Object.entries(one.statuses)) sum.statuses[status] = (sum.statuses[status] ?? 0) + count;
  }
  return sum;
}

/** cmi's /metrics as `name{labels}` → value. */
async function scrape(base: string): Promise<Map<string, number>> {
  const answer = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  if (answer.status !== 200) throw new Error(`/metrics: ${answer.status}`);
  const values = new Map<string, number>();
  for (const line of (await answer.text()).split('\n')) {
    const match = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) values.set(match[1] as string, Number(match[2]));
  }
  return values;
}

const records = (metrics: Map<string, number>, source: Source) => metrics.get(`cmi_log_records_total{source="${source}"}`) ?? 0;
const judgedErrors = (metrics: Map<string, number>) => metrics.get('cmi_log_records_judged_total{verdict="error"}') ?? 0;
const dropped = (metrics: Map<string, number>, source: Source) =>
  [...metrics].filter(([name]) => name.startsWith(`cmi_log_dropped_total{source="${source}"`)).reduce((sum, [, value]) => sum + value, 0);

/** Waits until cmi has read `lines` syslog lines and its judged and dropped counters stopped moving (two scrapes 300 ms apart alike). */
async function drained(base: string, lines: number): Promise<Map<string, number>> {
  const deadline = performance.now() + 120_000;
  let last = '';
  for (;;) {
    const metrics = await scrape(base);
    const now = `${records(metrics, 'syslog')} ${judgedErrors(metrics)} ${dropped(metrics, 'syslog')}`;
    if (records(metrics, 'syslog') >= lines && now === last) return metrics;
    if (performance.now() > deadline) throw new Error(`cmi did not drain in 120 s: ${now} for ${lines} lines`);
    last = now;
    await sleep(300);
  }
}

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const answer = await fetch(`http://127.0.0.1:${PORT}${path}`, {
    method,
    headers: { authorization: BASIC, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await answer.text();
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${text}`);
  return JSON.parse(text) as T;
}

/** The sum of every error's counter, as the API lists them (every error on one page). */
async function counterSum(): Promise<number> {
  const listed = await api<Array<{ infrastructure_error: { counter: number } }>>('GET', `${ERRORS}?per_page=100`);
  if (listed.length === 100) throw new Error('more than 100 errors: the bench expects a few dozen');
  return listed.reduce((sum, { infrastructure_error: error }) => sum + error.counter, 0);
}

async function ingestKey(kind: Source): Promise<{ id: number; public_key: string }> {
  const fields = { label: `bench ${kind}`, kind, rate_limit_per_minute: 1_000_000, ...(kind === 'syslog' ? { allowed_networks: '127.0.0.1' } : {}) };
  return (await api<{ ingest_key: { id: number; public_key: string } }>('POST', '/sysadmin_tools/infrastructure/ingest_keys.json', { ingest_key: fields })).ingest_key;
}

function tcpReferenceCount(): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect(TCP_REFERENCE_CONTROL_PORT, '127.0.0.1');
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('end', () => resolve(Number(text.trim())));
    socket.on('error', reject);
  });
}

async function httpReferenceCount(): Promise<number> {
  return Number(await (await fetch(`http://127.0.0.1:${HTTP_REFERENCE_PORT}/count`)).text()) * BODY_RECORDS;
}

const spread = (values: number[]) => `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}`;
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));
const verdict = (rate: number, goal: number) => (rate >= goal ? 'reached' : `**missed** (${((rate / goal) * 100).toFixed(0)}% of it)`);
const statusList = (statuses: Record<string, number>) => Object.entries(statuses).map(([status, count]) => `${fmt(count)} x ${status}`).join(', ');

interface Window {
  rate: number;
  /** cmi's CPU seconds per record over the window (cmi's runs only). */
  cpuPerRecord?: number;
  p99?: number;
  totals: SenderTotals;
}

/**
 * One run of a source's senders against cmi or the reference: started, `WARM_SECONDS` on, then the
 * window (`count` before and after; `during` runs in it, else a sleep of `seconds`); the senders'
 * totals once they stopped.
 */
async function measure(start: () => Promise<Started[]>, count: () => Promise<number>, seconds: number, pid: number | undefined, during?: () => number): Promise<Window> {
  const senders = await start();
  await sleep(WARM_SECONDS * 1000);
  const before = await count();
  const cpuBefore = pid === undefined ? 0 : cpuSeconds(pid);
  const started = performance.now();
  let p99: number | undefined;
  if (during) p99 = during();
  else await sleep(seconds * 1000);
  const after = await count();
  const elapsed = (performance.now() - started) / 1000;
  const cpu = pid === undefined ? undefined : (cpuSeconds(pid) - cpuBefore) / Math.max(1, after - before);
  const totals = await totalsOf(senders);
  return { rate: (after - before) / elapsed, totals, ...(cpu === undefined ? {} : { cpuPerRecord: cpu }), ...(p99 === undefined ? {} : { p99 }) };
}

function rows(name: string, unit: string, goal: number, cmi: Window[], reference: Window[]): string[] {
  const cmiRates = cmi.map((w) => w.rate);
  const refRates = reference.map((w) => w.rate);
  const ratios = cmiRates.map((rate, k) => rate / (refRates[k] as number));
  const rate = median(cmiRates);
  const cpu = median(cmi.map((w) => w.cpuPerRecord ?? 0)) * 1e6;
  return [
    `| ${name}: cmi | ${fmt(rate)} | ${spread(cmiRates)} | ${median(ratios).toFixed(2)}x (${ratios.map((r) => r.toFixed(2)).join(', ')}) | ${cpu.toFixed(1)} (at most ${fmt(1e6 / cpu)} ${unit}/s on a core) | ${fmt(goal)}: ${verdict(rate, goal)} |`,
    `| ${name}: reference | ${fmt(median(refRates))} | ${spread(refRates)} | 1 | | |`,
  ];
}

export async function logsSection(options: LogsOptions): Promise<string> {
  const { rounds, seconds, failures } = options;
  const database = await freshDatabase('sqlite');
  const work = mkdtempSync(join(tmpdir(), 'cmi-bench-logs-'));
  const probe = join(work, 'probe.lua');
  writeFileSync(probe, `function delay()\n  return ${PROBE_DELAY_MS}\nend\n`);
  const started = performance.now();
  const lines: string[] = [];
  const notes: string[] = [];
  let server: RunningServer | undefined;
  const references: ChildProcess[] = [];
  try {
    await seedUsers(database.url, 1);
    server = await startServer({
      DATABASE_URL: database.url,
      CMI_SPOOL_DIR: work,
      CMI_METRICS_TOKEN: METRICS_TOKEN,
      CMI_SYSLOG_LISTEN: `tcp://127.0.0.1:${SYSLOG_PORT}`,
    }, [], { port: PORT, cores: '0', program: 'built' });
    const base = server.baseUrl;
    const pid = server.child.pid as number;
    const tcpReference = startHelper('tcp-discard', { port: TCP_REFERENCE_PORT, controlPort: TCP_REFERENCE_CONTROL_PORT }, '0');
    const httpReference = startHelper('http-discard', { port: HTTP_REFERENCE_PORT }, '0');
    references.push(tcpReference.child, httpReference.child);
    await Promise.all([tcpReference.ready, httpReference.ready]);
    await ingestKey('syslog');
    const journald = await ingestKey('journald');
    const otlp = await ingestKey('otlp');

    // Syslog: in each round the API idle, the reference, then cmi with the API probed.
    const probeWrk = () => wrk(`${base}/version.json`, { seconds, connections: PROBE_CONNECTIONS, cores: '1', headers: { Authorization: BASIC }, script: probe });
    const syslog = (port: number) => (round: number) => startSenders('syslog', { port, connections: SYSLOG_CONNECTIONS, seconds: WARM_SECONDS + seconds + 1 }, round);
    const pacedSyslog = (round: number) => startSenders('syslog', { port: SYSLOG_PORT, connections: SYSLOG_CONNECTIONS, seconds: WARM_SECONDS + seconds + 1, linesPerSecond: GOALS.syslog / SENDERS }, round);
    const syslogCmi: Window[] = [];
    const syslogAtGoal: Window[] = [];
    const syslogReference: Window[] = [];
    const idle: number[] = [];
    let linesSent = 0;
    let errorsSent = 0;
    let overloaded = 0;
    const sumBefore = await counterSum();
    // A first probe, not counted: the API's first seconds under load are V8 compiling it (p99s of 10 to 45 ms seen).
    probeWrk();
    for (let round = 0; round < rounds; round++) {
      idle.push(probeWrk().p99);
      syslogReference.push(await measure(() => syslog(TCP_REFERENCE_PORT)(round), tcpReferenceCount, seconds, undefined));
      const run = await measure(() => syslog(SYSLOG_PORT)(round), async () => records(await scrape(base), 'syslog'), seconds, pid, () => probeWrk().p99);
      syslogCmi.push(run);
      linesSent += run.totals.records;
      errorsSent += run.totals.errors;
      await drained(base, linesSent);
      // The goal's load, paced (the issue's figure: the API's p99 while cmi takes 100,000 lines/s), probed the same way.
      const atGoal = await measure(() => pacedSyslog(round), async () => records(await scrape(base), 'syslog'), seconds, pid, () => probeWrk().p99);
      syslogAtGoal.push(atGoal);
      linesSent += atGoal.totals.records;
      errorsSent += atGoal.totals.errors;
      const metrics = await drained(base, linesSent);
      overloaded = metrics.get('cmi_log_dropped_total{source="syslog",reason="overloaded"}') ?? 0;
      console.log(`syslog round ${round + 1}: reference ${fmt(syslogReference.at(-1)!.rate)}/s, cmi ${fmt(run.rate)}/s, p99 ${ms(run.p99 ?? 0)} ms; at ${fmt(atGoal.rate)}/s p99 ${ms(atGoal.p99 ?? 0)} ms (idle ${ms(idle.at(-1)!)})`);
    }
    const final = await drained(base, linesSent);
    const syslogRecorded = (await counterSum()) - sumBefore;
    const syslogRead = records(final, 'syslog');
    const exact = syslogRecorded === errorsSent && syslogRead === linesSent;
    if (!exact) failures.push(`logs: syslog errors' counters add up to ${syslogRecorded} for ${errorsSent} err lines written (${syslogRead} of ${linesSent} lines read, ${overloaded} dropped overloaded)`);
    const ratios = syslogAtGoal.map((run, k) => (run.p99 as number) / (idle[k] as number));
    const saturatedRatios = syslogCmi.map((run, k) => (run.p99 as number) / (idle[k] as number));
    const p99Ratio = median(ratios);

    // journald and OTLP: in each round the reference, then cmi.
    const http = async (source: 'journald' | 'otlp') => {
      const cmiUrl = source === 'journald' ? `${base}/api/${journald.id}/journal/${journald.public_key}/upload` : `${base}/v1/logs`;
      const headers = source === 'journald' ? { 'Content-Type': 'application/vnd.fdo.journal' } : { 'Content-Type': 'application/json', Authorization: `Bearer ${otlp.public_key}` };
      const senders = (url: string, round: number) => () => startSenders('http', { url, headers, kind: source, concurrency: HTTP_CONCURRENCY, seconds: WARM_SECONDS + seconds + 1, records: BODY_RECORDS }, round);
      const cmi: Window[] = [];
      const reference: Window[] = [];
      const before = await counterSum();
      const statuses: Record<string, number> = {};
      let errors = 0;
      for (let round = 0; round < rounds; round++) {
        reference.push(await measure(senders(`http://127.0.0.1:${HTTP_REFERENCE_PORT}/upload`, round), httpReferenceCount, seconds, undefined));
        const run = await measure(senders(cmiUrl, round), async () => records(await scrape(base), source), seconds, pid);
        cmi.push(run);
        errors += run.totals.errors;
        for (const [status, count] of Object.entries(run.totals.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
        console.log(`${source} round ${round + 1}: reference ${fmt(reference.at(-1)!.rate)}/s, cmi ${fmt(run.rate)}/s`);
      }
      const recorded = (await counterSum()) - before;
      if (recorded !== errors) failures.push(`logs: ${source} errors' counters add up to ${recorded} for ${errors} errors in bodies answered 2xx`);
      notes.push(`- ${source}: answers ${statusList(statuses)}; the errors' counters went up by ${fmt(recorded)} for the ${fmt(errors)} errors of the bodies answered 2xx (${recorded === errors ? 'exact' : `**${fmt(recorded - errors)} off**`}).`);
      return rows(source === 'journald' ? 'journald (export format)' : 'OTLP/HTTP (JSON)', 'records', GOALS[source], cmi, reference);
    };
    lines.push(...rows('syslog (TCP, octet-counted RFC 5424)', 'lines', GOALS.syslog, syslogCmi, syslogReference));
    lines.push(...(await http('journald')));
    lines.push(...(await http('otlp')));
    notes.unshift(
      `- syslog: ${fmt(linesSent)} lines written to cmi in all, ${fmt(errorsSent)} at err; cmi read ${fmt(syslogRead)}, dropped ${fmt(overloaded)} as overloaded; ` +
        `once drained, the errors' counters add up to **${fmt(syslogRecorded)}** (${syslogRecorded === errorsSent ? 'exact' : `**${fmt(syslogRecorded - errorsSent)} off**`}).`,
      `- The HTTP API while cmi takes the goal's ${fmt(GOALS.syslog)} lines/s (paced; measured ${fmt(median(syslogAtGoal.map((run) => run.rate)))}/s): p99 of \`GET /version.json\` **${ms(median(syslogAtGoal.map((run) => run.p99 as number)))} ms** against ${ms(median(idle))} ms idle: ` +
        `**${p99Ratio.toFixed(2)}x**, the median of the rounds' ratios (${ratios.map((r) => r.toFixed(2)).join(', ')}) (goal: at most ${P99_GOAL}x: ${p99Ratio <= P99_GOAL ? 'reached' : '**missed**'}).`,
      `- The same at saturation (the senders as fast as cmi reads, its one core busy with syslog): p99 ${ms(median(syslogCmi.map((run) => run.p99 as number)))} ms, ${median(saturatedRatios).toFixed(2)}x idle (rounds ${saturatedRatios.map((r) => r.toFixed(2)).join(', ')}).`,
      `- Memory of cmi: peak resident ${residentMb(pid, 'VmHWM').toFixed(0)} MB (VmHWM, over the whole section).`,
    );
  } finally {
    if (server !== undefined) await server.stop();
    for (const child of references) await stop(child);
    rmSync(work, { recursive: true, force: true });
    await database.drop();
  }

  return `
## Logs

${provenance(options.info)} SQLite; ${rounds} rounds of ${seconds} s; ${((performance.now() - started) / 1000).toFixed(0)} s in all.

One \`cmi serve\` (bin/cmi.js and dist/, compiled by the run) pinned to core 0, listening for syslog on
\`tcp://127.0.0.1:${SYSLOG_PORT}\`, with ingest keys made through the API (syslog: \`allowed_networks\`
127.0.0.1; journald; otlp; each \`rate_limit_per_minute\` 1,000,000, the most). The load comes from
${SENDERS} node processes (tools/bench/log-senders.ts) pinned to core 1, started for each run and given
${WARM_SECONDS} s before the window opens. The records (tools/bench/log-payloads.ts) come from 500 host names and 4
programs; one in 100 is an error (20 distinct messages), the rest info.

- syslog: ${SYSLOG_CONNECTIONS} TCP connections a process writing octet-counted RFC 5424 lines (about 130 bytes) as fast as the
  kernel takes them; lines/s is the change of \`cmi_log_records_total{source="syslog"}\` over the window.
  Then the same senders paced to the goal's ${fmt(GOALS.syslog)} lines/s in all. During both, wrk (${PROBE_CONNECTIONS} connections, each
  waiting ${PROBE_DELAY_MS} ms between requests, on core 1) asks \`GET /version.json\` with Basic auth (the goal's p99 is the
  paced run's); the same probe runs on cmi idle at the start of each round (and once
  before the first, not counted: V8 compiling the API). After the
  rounds, once cmi drained (its counters stopped moving), the errors' counters are added up (the API's list)
  against the err lines written.
- journald and OTLP: ${HTTP_CONCURRENCY} requests in flight a process, each a body of ${fmt(BODY_RECORDS)} records (journal export
  format, about 250 KB, without \`__CURSOR\` so every entry is new; OTLP/HTTP JSON, \`severityNumber\` 17 for
  the errors); records/s is the change of \`cmi_log_records_total{source}\` over the window.
- The references, on core 0 too and fed by the same senders in the same round: a node:net server that reads
  and discards, counting frames (syslog); a node:http server that reads each body and answers \`200 {}\`
  (journald, OTLP), its bodies read times ${fmt(BODY_RECORDS)}. "ratio": cmi / the reference, the median of the
  rounds' ratios. "cmi CPU": cmi's user + system time over the window per record.

| source | records/s (median) | spread | ratio to the reference (rounds) | cmi CPU µs/record | goal, records/s |
|---|---|---|---|---|---|
${lines.join('\n')}

${notes.join('\n')}
`;
}
