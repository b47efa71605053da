/**
 * Mixed load, as during an incident (docs/benchmarks.md#mixed): one `cmi serve` (bin/cmi.js, dist/,
 * pinned to core 0) on SQLite (and PostgreSQL with --postgres), wrk on core 1 with a Lua script that
 * chooses each request. Three loads take turns in each round: reads only (filtered error lists and
 * users pages), reports only (a new error each, answered once durable) and the mix (every third
 * request a report, the others the reads in the same order). The mix is compared with the harmonic
 * mix of the two rates measured in the same round: what it would reach if reports and reads did not
 * slow each other down. Then a soak: the mix for minutes, the server's RSS sampled every few seconds.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningServer, startServer } from '../shared/server-process.js';
import { BASIC, DATABASE_NAMES, type DatabaseKind, ERROR_CLASSES, ERROR_COMPONENTS, ERROR_HOSTS, freshDatabase, seedErrors, seedUsers } from './datasets.js';
import { provenance, type RunInfo } from './document.js';
import { fmt, median, residentMb } from './support.js';
import { parseWrk, wrk, type WrkResult } from './wrk.js';

const PORT = 3341;
const ERRORS = '/sysadmin_tools/infrastructure/errors';
const CONNECTIONS = 32;
/** The share of reports in the mix, and the goal: the mix at least this much of the harmonic mix. */
const REPORT_SHARE = 1 / 3;
const GOAL = 0.7;

export interface MixedOptions {
  info: RunInfo;
  kinds: DatabaseKind[];
  postgres?: string;
  quick: boolean;
  rounds: number;
}

/** The incident: new errors from these hosts, of this component; the reads look elsewhere, and once at the incident's host. */
const INCIDENT_HOSTS = ['hv-incident-1', 'hv-incident-2', 'hv-incident-3'];
const REPORT_TEMPLATE =
  '{"infrastructure_error":{"error_class":"IncidentError_%s_%08d","message":"volume detached during migration",' +
  '"backtrace":["app/storage/attach.js:42:in attach","app/jobs/migrate.js:7:in run"],"host":"%s","component":"incident"}}';

/**
 * The reads, in the order each connection asks them: lists filtered by host, component or class (the
 * seeded data's), one list filtered on an incident host (which every report there changes), and users pages.
 */
function readPaths(users: number): string[] {
  const lists = [
    ...ERROR_HOSTS.slice(0, 10).map((host) => `${ERRORS}.json?host=${host}`),
    ...ERROR_COMPONENTS.map((component) => `${ERRORS}.json?component=${component}&per_page=20`),
    ...ERROR_CLASSES.slice(0, 5).map((errorClass) => `${ERRORS}.json?error_class=${errorClass}`),
    `${ERRORS}.json?host=${INCIDENT_HOSTS[0]}`,
  ];
  const pages = Math.max(1, Math.floor(users / 50));
  const userPages = Array.from({ length: 10 }, (_, k) => `/users.json?page=${1 + ((k * 7) % pages)}&per_page=50`);
  return [...lists, ...userPages];
}

/** The Lua script of one load: the reads in turn, reports only, or every third request a report. */
function luaScript(dir: string, name: string, reads: string[], mode: 'reads' | 'reports' | 'mix'): string {
  const lua = (text: string) => `[[${text}]]`;
  const lines = [
    `wrk.headers["Authorization"] = "${BASIC}"`,
    `local template = ${lua(REPORT_TEMPLATE)}`,
    `local reads = { ${reads.map(lua).join(', ')} }`,
    `local hosts = { ${INCIDENT_HOSTS.map(lua).join(', ')} }`,
    'local tag = "xx"',
    'local n = 0',
    'local r = 0',
    'local counter = 0',
    'function setup(thread) counter = counter + 1; thread:set("id", counter) end',
    'function init(args) tag = args[1] .. "_" .. tostring(id) end',
    'local function report()',
    '  n = n + 1',
    '  local body = string.format(template, tag, n, hosts[(n % #hosts) + 1])',
    `  return wrk.format("POST", ${lua(`${ERRORS}.json`)}, { ["Content-Type"] = "application/json", ["Authorization"] = "${BASIC}" }, body)`,
    'end',
    'local function read()',
    '  r = r + 1',
    '  return wrk.format("GET", reads[(r % #reads) + 1])',
    'end',
    'local k = 0',
    'function request()',
    '  k = k + 1',
    mode === 'reads' ? '  return read()' : mode === 'reports' ? '  return report()' : '  if k % 3 == 0 then return report() else return read() end',
    'end',
  ];
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** wrk run in the background (the soak), its output read once it ends. */
function wrkInBackground(url: string, script: string, seconds: number, tag: string): Promise<WrkResult> {
  const child = spawn('taskset', ['-c', '1', 'wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', script, url, '--', tag], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ ...parseWrk(out), clientCpuSeconds: 0 }) : reject(new Error(`wrk exited with ${code}: ${out}`))));
  });
}

/** The least-squares line through `points` (x, y): y = intercept + slope * x. */
function lineThrough(points: ReadonlyArray<readonly [number, number]>): { slope: number; intercept: number } {
  const n = points.length;
  if (n === 0) return { slope: 0, intercept: 0 };
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const sxx = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  const sxy = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const slope = sxx === 0 ? 0 : sxy / sxx;
  return { slope, intercept: meanY - slope * meanX };
}

const harmonic = (reports: number, reads: number) => 1 / (REPORT_SHARE / reports + (1 - REPORT_SHARE) / reads);
const spread = (values: number[], digits = 0) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;

async function oneDatabase(options: MixedOptions, kind: DatabaseKind, work: string): Promise<string> {
  const users = options.quick ? 1_000 : 10_000;
  const errors = options.quick ? 10_000 : 100_000;
  const seconds = options.quick ? 2 : 5;
  const soakSeconds = options.quick ? 30 : 600;
  const database = await freshDatabase(kind, options.postgres);
  let server: RunningServer | undefined;
  const spool = mkdtempSync(join(tmpdir(), 'cmi-bench-spool-'));
  try {
    await seedUsers(database.url, users);
    await seedErrors(database.url, errors, new Date());
    server = await startServer({ DATABASE_URL: database.url, CMI_SPOOL_DIR: spool, CMI_ERRORS_RATE_LIMIT: '1000000', LOG_LEVEL: 'warn' }, [], { port: PORT, cores: '0', program: 'built' });
    const pid = server.child.pid as number;
    const url = `http://127.0.0.1:${PORT}/`;
    const reads = readPaths(users);
    for (const path of reads) {
      const answer = await fetch(`http://127.0.0.1:${PORT}${path}`, { headers: { authorization: BASIC } });
      await answer.arrayBuffer();
      if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
    }
    const scripts = {
      reads: luaScript(work, `reads-${kind}.lua`, reads, 'reads'),
      reports: luaScript(work, `reports-${kind}.lua`, reads, 'reports'),
      mix: luaScript(work, `mix-${kind}.lua`, reads, 'mix'),
    };
    const run = (load: keyof typeof scripts, tag: string, length = seconds) => wrk(url, { script: scripts[load], scriptArgs: [tag], seconds: length, connections: CONNECTIONS, cores: '1' });
    // Warm-up: each load once.
    for (const load of ['reads', 'reports', 'mix'] as const) run(load, `w-${load}`, options.quick ? 1 : 2);

    const rounds: Array<{ reads: WrkResult; reports: WrkResult; mix: WrkResult }> = [];
    for (let round = 0; round < options.rounds; round++) {
      rounds.push({ reads: run('reads', `r${round}`), reports: run('reports', `p${round}`), mix: run('mix', `m${round}`) });
    }
    const failed = rounds.reduce((sum, { reads: a, reports: b, mix: c }) => sum + a.non2xx + b.non2xx + c.non2xx, 0);
    const ratios = rounds.map(({ reads: a, reports: b, mix: c }) => c.requestsPerSecond / harmonic(b.requestsPerSecond, a.requestsPerSecond));
    const rate = (load: 'reads' | 'reports' | 'mix') => rounds.map((one) => one[load].requestsPerSecond);
    const harmonics = rounds.map(({ reads: a, reports: b }) => harmonic(b.requestsPerSecond, a.requestsPerSecond));
    const ratio = median(ratios);

    // The soak: the mix without a pause, RSS every few seconds.
    const every = options.quick ? 2 : 5;
    const samples: Array<{ at: number; mb: number }> = [];
    const soakStarted = performance.now();
    const soak = wrkInBackground(url, scripts.mix, soakSeconds, 'soak');
    while (performance.now() - soakStarted < soakSeconds * 1000) {
      samples.push({ at: (performance.now() - soakStarted) / 1000, mb: residentMb(pid, 'VmRSS') });
      await sleep(every * 1000);
    }
    const soaked = await soak;
    samples.push({ at: (performance.now() - soakStarted) / 1000, mb: residentMb(pid, 'VmRSS') });
    const mbs = samples.map((sample) => sample.mb);
    // Flat: the least-squares line through the second half's samples rises by less than 5% of where it
    // starts over that half (a leak grows steadily; the first half is warming up). A line, not the
    // peak: a garbage collection's swing is not growth.
    const half = samples.filter((sample) => sample.at >= soakSeconds / 2);
    const halfStart = half[0]?.mb ?? mbs[0] ?? 0;
    const halfMax = Math.max(...half.map((sample) => sample.mb));
    const halfEnd = half.at(-1)?.mb ?? halfStart;
    const { slope, intercept } = lineThrough(half.map((sample) => [sample.at, sample.mb] as const));
    const halfSeconds = Math.max(1, (half.at(-1)?.at ?? 0) - (half[0]?.at ?? 0));
    const fittedStart = intercept + slope * (half[0]?.at ?? 0);
    const fittedGrowth = slope * halfSeconds;
    const flat = fittedGrowth < 0.05 * fittedStart;
    const perMinute = slope * 60;

    return [
      `#### ${DATABASE_NAMES[kind]}`,
      '',
      '| load | requests/s (median) | rounds |',
      '|---|---|---|',
      `| reads only (${reads.length - 10} filtered error lists, 10 users pages, in turn) | ${fmt(median(rate('reads')))} | ${rate('reads').map(fmt).join(', ')} |`,
      `| reports only (a new error each, durable) | ${fmt(median(rate('reports')))} | ${rate('reports').map(fmt).join(', ')} |`,
      `| harmonic mix of the two (1/3 reports) | ${fmt(median(harmonics))} | ${harmonics.map(fmt).join(', ')} |`,
      `| **the mix** (every third request a report) | **${fmt(median(rate('mix')))}** | ${rate('mix').map(fmt).join(', ')} |`,
      '',
      `- The mix against the harmonic mix of its round: **${ratio.toFixed(2)}x** (rounds ${spread(ratios, 2)}); goal at least ${GOAL}x: ${ratio >= GOAL ? 'reached' : '**missed**'}. ` +
        `Answers of 400 or more: ${fmt(failed)}.`,
      `- Soak: the mix for ${soakSeconds} s (${fmt(soaked.requestsPerSecond)} requests/s, ${fmt(soaked.non2xx)} answers of 400 or more), RSS every ${every} s: ` +
        `start ${mbs[0]?.toFixed(0)} MB, max ${Math.max(...mbs).toFixed(0)} MB, end ${mbs.at(-1)?.toFixed(0)} MB; second half ${halfStart.toFixed(0)} → ${halfEnd.toFixed(0)} MB ` +
        `(max ${halfMax.toFixed(0)}); its least-squares line ${perMinute >= 0 ? '+' : ''}${perMinute.toFixed(1)} MB/min, ${fittedGrowth >= 0 ? '+' : ''}${fittedGrowth.toFixed(1)} MB over the half ` +
        `(${((fittedGrowth / fittedStart) * 100).toFixed(1)}% of ${fittedStart.toFixed(0)} MB): ${flat ? 'flat (under 5%)' : '**not flat** (5% or more)'}.`,
    ].join('\n');
  } finally {
    if (server && server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    rmSync(spool, { recursive: true, force: true });
    await database.drop();
  }
}

export async function mixedSection(options: MixedOptions): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), 'cmi-bench-mixed-'));
  const parts: string[] = [];
  try {
    for (const kind of options.kinds) parts.push(await oneDatabase(options, kind, work));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return `
## Mixed

${provenance(options.info)}

Load as during an incident (tools/bench/mixed.ts): one \`cmi serve\` (dist/, one process, pinned to core 0) on a
database of ${options.quick ? '1,000' : '10,000'} users and ${options.quick ? '10,000' : '100,000'} errors; wrk on core 1, ${CONNECTIONS} connections, a Lua script choosing each
request. Each round runs three loads for ${options.quick ? 2 : 5} s each, in turn: the reads alone (error lists filtered by one
of 10 hosts, 5 components, 5 classes or an incident host, and 10 users pages, asked in turn), the reports
alone (\`POST\` of a new error each, from one of 3 incident hosts, answered once durable), and the mix:
every third request a report, the others the same reads. The harmonic mix, 1 / (1/3 / reports + 2/3 /
reads), is what the mix would reach if neither slowed the other; the goal is the mix at ${GOAL}x of it or more,
median of ${options.rounds} rounds. A report drops only the kept pages it may change (docs/architecture.md#how-cached-pages-stay-right):
here the list filtered on the incident host, not the others nor the users pages. The soak's RSS is flat
when the least-squares line through the second half's samples rises by less than 5% of its value at
that half's start over the half (the first half warms up; a line, unlike the peak, does not count a
garbage collection's swing as growth).

${parts.join('\n\n')}
`;
}
