/**
 * The throughput figures and their goals (docs/benchmarks.md#throughput): each
 * scenario against a raw node:http server answering the bytes cmi answered, in the same run, on
 * SQLite and PostgreSQL, with `--workers 1` and `--workers 2`.
 */
import type { ChildProcess } from 'node:child_process';
import { type RunningServer, startServer } from '../../test/support/cli.js';
import { BASIC, DATABASE_NAMES, type DatabaseKind, type SharedDatabases } from './datasets.js';
import { provenance, type RunInfo } from './document.js';
import { answerOf, startRawServer } from './raw-server.js';
import { fmt, median, processTree, residentMb, stop } from './support.js';
import { wrk, type WrkResult } from './wrk.js';

const PORT = 3321;
const RAW_PORT = 3322;
const CONNECTIONS = 50;
const USERS_PAGE = '/users.json?page=4&per_page=2';
const ERRORS = '/sysadmin_tools/infrastructure/errors';
/** p99 latency every scenario should stay under at 50 connections. */
const P99_GOAL_MS = 5;
const RSS_GOAL_MB = 100;

export interface Scenario {
  name: string;
  /** Shown in --quick runs too. */
  quick: boolean;
  /** The least cmi / raw (for the 304: cmi's 304 / cmi's 200 of the same URL). */
  goal: number;
  path: (errors: number) => string;
  credentials: 'basic' | 'cookie' | 'etag';
  /** Runs on the users of the database (its RSS counts as "under the 1M-user load"). */
  users: boolean;
}

export const SCENARIOS: Scenario[] = [
  { name: '`GET /version.json`, Basic auth', quick: true, goal: 0.75, path: () => '/version.json', credentials: 'basic', users: true },
  { name: `\`GET ${USERS_PAGE}\`, Basic auth`, quick: true, goal: 0.7, path: () => USERS_PAGE, credentials: 'basic', users: true },
  { name: 'the same in XML', quick: false, goal: 0.6, path: () => USERS_PAGE.replace('.json', '.xml'), credentials: 'basic', users: true },
  { name: 'the same with the session cookie instead of Basic', quick: true, goal: 0.7, path: () => USERS_PAGE, credentials: 'cookie', users: true },
  { name: `\`GET ${ERRORS}/:id.xml\``, quick: true, goal: 0.6, path: (errors) => `${ERRORS}/${Math.floor(errors / 2)}.xml`, credentials: 'basic', users: false },
  { name: `\`GET ${ERRORS}.json?host=hv-17\` (a filtered list page)`, quick: false, goal: 0.5, path: () => `${ERRORS}.json?host=hv-17`, credentials: 'basic', users: false },
  { name: `304 on \`If-None-Match\` vs the full 200 of \`GET ${USERS_PAGE}\``, quick: true, goal: 1.0, path: () => USERS_PAGE, credentials: 'etag', users: true },
];

export interface ThroughputOptions {
  info: RunInfo;
  data: SharedDatabases;
  kinds: DatabaseKind[];
  workers: number[];
  users: number;
  errors: number;
  seconds: number;
  rounds: number;
  /** wrk seconds per target before the rounds; 0: 300 sequential requests instead (--quick). */
  warmUpSeconds: number;
  quick: boolean;
}

interface Target {
  name: 'raw' | 'cmi' | 'cmi 200';
  url: string;
  headers: Record<string, string>;
}

interface Outcome {
  kind: DatabaseKind;
  workers: number;
  runs: Map<Target['name'], WrkResult[]>;
  /** RSS (VmRSS) of cmi's processes right after the last run, MB: the process first, then its workers. */
  rss: number[];
  /** Their peak RSS (VmHWM) by then, MB, start-up and the first password check (argon2id's 19 MiB) included. */
  peakRss: number[];
}

/** The headers a scenario's requests carry, found by asking cmi once with Basic auth. */
export async function credentialsFor(scenario: Scenario, url: string): Promise<Record<string, string>> {
  if (scenario.credentials === 'basic') return { Authorization: BASIC };
  const first = await fetch(url, { headers: { authorization: BASIC } });
  await first.arrayBuffer();
  if (scenario.credentials === 'cookie') {
    const cookie = /(_cmi_session=[^;]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1];
    if (!cookie) throw new Error('cmi set no _cmi_session cookie on a Basic-auth answer');
    return { Cookie: cookie };
  }
  const etag = first.headers.get('etag');
  if (!etag) throw new Error(`cmi sent no ETag for ${url}`);
  return { Authorization: BASIC, 'If-None-Match': etag };
}

async function warmUp(target: Target, options: ThroughputOptions, cores: string): Promise<void> {
  if (options.warmUpSeconds > 0) {
    wrk(target.url, { headers: target.headers, seconds: options.warmUpSeconds, connections: CONNECTIONS, cores });
    return;
  }
  for (let k = 0; k < 300; k++) await (await fetch(target.url, { headers: target.headers })).arrayBuffer();
}

async function runScenario(scenario: Scenario, kind: DatabaseKind, workers: number, url: string, options: ThroughputOptions): Promise<Outcome> {
  // --workers 1: cmi (and raw) on core 0, wrk on core 1. --workers 2: two workers need both cores,
  // and wrk shares them (the machine has no third).
  const serverCores = workers === 1 ? '0' : '0,1';
  const wrkCores = workers === 1 ? '1' : '0,1';
  let server: RunningServer | undefined;
  let raw: ChildProcess | undefined;
  try {
    server = await startServer({ DATABASE_URL: url, CMI_ERRORS_RATE_LIMIT: '1000000' }, ['--workers', String(workers)], {
      port: PORT, cores: serverCores, stderr: 'inherit', program: 'built',
    });
    const base = `http://127.0.0.1:${PORT}`;
    const path = scenario.path(options.errors);
    const headers = await credentialsFor(scenario, `${base}${path}`);
    const answer = await answerOf(await fetch(`${base}${path}`, { headers }));
    const expected = scenario.credentials === 'etag' ? 304 : 200;
    if (answer.status !== expected) throw new Error(`${path}: cmi answered ${answer.status}, not ${expected}: ${answer.body}`);
    raw = await startRawServer(answer, { port: RAW_PORT, cores: serverCores, processes: workers });
    const targets: Target[] = [
      { name: 'raw', url: `http://127.0.0.1:${RAW_PORT}${path}`, headers },
      { name: 'cmi', url: `${base}${path}`, headers },
    ];
    if (scenario.credentials === 'etag') targets.push({ name: 'cmi 200', url: `${base}${path}`, headers: { Authorization: BASIC } });
    for (const target of targets) await warmUp(target, options, wrkCores);
    const runs = new Map<Target['name'], WrkResult[]>(targets.map((target) => [target.name, []]));
    // The targets take turns in each round: a round's figures are seconds apart, so their ratio
    // holds on a machine whose speed drifts between rounds.
    for (let round = 0; round < options.rounds; round++) {
      for (const target of targets) runs.get(target.name)?.push(wrk(target.url, { headers: target.headers, seconds: options.seconds, connections: CONNECTIONS, cores: wrkCores }));
    }
    const processes = processTree(server.child.pid as number);
    return { kind, workers, runs, rss: processes.map((pid) => residentMb(pid, 'VmRSS')), peakRss: processes.map((pid) => residentMb(pid, 'VmHWM')) };
  } finally {
    if (raw) await stop(raw);
    if (server) await server.stop();
  }
}

const ratioOf = (outcome: Outcome, over: Target['name'], under: Target['name']) => {
  const below = outcome.runs.get(under) as WrkResult[];
  return median((outcome.runs.get(over) as WrkResult[]).map((run, k) => run.requestsPerSecond / (below[k] as WrkResult).requestsPerSecond));
};
const rateOf = (outcome: Outcome, target: Target['name']) => median((outcome.runs.get(target) as WrkResult[]).map((run) => run.requestsPerSecond));
const latencyOf = (outcome: Outcome, which: 'p50' | 'p99', target: Target['name'] = 'cmi') => median((outcome.runs.get(target) as WrkResult[]).map((run) => run[which]));
const failedOf = (outcome: Outcome) => [...outcome.runs.values()].flat().reduce((sum, run) => sum + run.non2xx, 0);
/** The figure a scenario's goal is about: cmi / raw, or for the 304 cmi's 304 / its 200. */
const goalRatio = (scenario: Scenario, outcome: Outcome) => ratioOf(outcome, 'cmi', scenario.credentials === 'etag' ? 'cmi 200' : 'raw');
const verdict = (value: number, goal: number) => (value >= goal ? `${value.toFixed(2)}x reached` : `${value.toFixed(2)}x **missed**`);
const rssText = (rss: number[]) => (rss.length === 1 ? rss[0]!.toFixed(0) : `${rss[0]!.toFixed(0)} (primary), ${rss.slice(1).map((mb) => mb.toFixed(0)).join(', ')}`);
const setting = (outcome: Outcome) => `${DATABASE_NAMES[outcome.kind]}, \`--workers ${outcome.workers}\``;

function scenarioTable(scenario: Scenario, outcomes: Outcome[]): string {
  const etag = scenario.credentials === 'etag';
  const head = etag
    ? '| database, workers | cmi 304 requests/s | cmi 200 requests/s | 304 / 200 | raw 304 requests/s | cmi 304 / raw | p50 ms | p99 ms | p99 < 5 ms | raw p99 ms | RSS MB | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|---|'
    : '| database, workers | cmi requests/s | raw requests/s | cmi / raw | p50 ms | p99 ms | p99 < 5 ms | raw p99 ms | RSS MB | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|';
  const rows = outcomes.map((outcome) => {
    const p99 = latencyOf(outcome, 'p99');
    const tail = `${latencyOf(outcome, 'p50').toFixed(2)} | ${p99.toFixed(2)} | ${p99 < P99_GOAL_MS ? 'yes' : '**no**'} | ${latencyOf(outcome, 'p99', 'raw').toFixed(2)} | ${rssText(outcome.rss)} | ${rssText(outcome.peakRss)} |`;
    return etag
      ? `| ${setting(outcome)} | ${fmt(rateOf(outcome, 'cmi'))} | ${fmt(rateOf(outcome, 'cmi 200'))} | ${verdict(goalRatio(scenario, outcome), scenario.goal)} | ${fmt(rateOf(outcome, 'raw'))} | ${ratioOf(outcome, 'cmi', 'raw').toFixed(2)}x | ${tail}`
      : `| ${setting(outcome)} | ${fmt(rateOf(outcome, 'cmi'))} | ${fmt(rateOf(outcome, 'raw'))} | ${verdict(goalRatio(scenario, outcome), scenario.goal)} | ${tail}`;
  });
  const failed = outcomes.filter((outcome) => failedOf(outcome) > 0).map((outcome) => `${setting(outcome)}: **${fmt(failedOf(outcome))} answers of 400 or more**`);
  return `### ${scenario.name}\n\nGoal: ${etag ? '304 / 200' : 'cmi / raw'} at least ${scenario.goal.toFixed(2)}x.\n\n${head}\n${rows.join('\n')}\n${failed.length > 0 ? `\n${failed.join('; ')}.\n` : ''}`;
}

export async function throughputSection(options: ThroughputOptions): Promise<string> {
  const scenarios = SCENARIOS.filter((scenario) => !options.quick || scenario.quick);
  const results = new Map<Scenario, Outcome[]>(scenarios.map((scenario) => [scenario, []]));
  for (const kind of options.kinds) {
    const { url } = await options.data.get(kind, { users: options.users, errors: options.errors });
    for (const workers of options.workers) {
      for (const scenario of scenarios) {
        console.log(`throughput: ${DATABASE_NAMES[kind]}, --workers ${workers}: ${scenario.name}`);
        results.get(scenario)?.push(await runScenario(scenario, kind, workers, url, options));
      }
    }
  }
  const settings = results.get(scenarios[0] as Scenario) as Outcome[];
  const summaryHead = `| scenario | goal | ${settings.map(setting).join(' | ')} |\n|---|---|${settings.map(() => '---|').join('')}`;
  const summary = scenarios.map((scenario) => {
    const cells = (results.get(scenario) as Outcome[]).map((outcome) => verdict(goalRatio(scenario, outcome), scenario.goal));
    return `| ${scenario.name} | >= ${scenario.goal.toFixed(2)}x | ${cells.join(' | ')} |`;
  });
  const p99Row = settings.map((_, k) => {
    const outcomes = scenarios.map((scenario) => (results.get(scenario) as Outcome[])[k] as Outcome);
    const over = outcomes.filter((outcome) => latencyOf(outcome, 'p99') >= P99_GOAL_MS).length;
    // The raw server's own p99 in the same runs: what the machine allowed, whatever the server.
    const rawOver = outcomes.filter((outcome) => latencyOf(outcome, 'p99', 'raw') >= P99_GOAL_MS).length;
    return `${over === 0 ? 'yes, every scenario' : `**no**: ${over} of ${scenarios.length}`} (raw: ${rawOver} of ${scenarios.length} over)`;
  });
  const rssRow = settings.map((_, k) => {
    const outcomes = scenarios.filter((scenario) => scenario.users).map((scenario) => (results.get(scenario) as Outcome[])[k] as Outcome);
    const most = Math.max(...outcomes.flatMap((outcome) => outcome.rss));
    const peak = Math.max(...outcomes.flatMap((outcome) => outcome.peakRss));
    return `${most.toFixed(0)} MB ${most <= RSS_GOAL_MB ? 'reached' : '**missed**'} (peak ${peak.toFixed(0)} MB)`;
  });
  const warm = options.warmUpSeconds > 0 ? `${options.warmUpSeconds} s of wrk` : '300 sequential requests';
  return `
## Throughput against raw node:http

${provenance(options.info)}

cmi is what \`npm start\` runs (bin/cmi.js and dist/, compiled by the run), on one database holding
${fmt(options.users)} users and ${fmt(options.errors)} infrastructure errors (tools/bench/datasets.ts). For every scenario a fresh
\`cmi serve --workers N\` starts, is asked once, and a raw node:http server starts that answers every request with
exactly what cmi answered (status, body and headers, but Date, Connection and Keep-Alive, which node:http adds
itself): the reference each cmi figure is a ratio to. With \`--workers 1\` cmi and the raw server are pinned to core
0 and wrk to core 1; with \`--workers 2\` cmi's two workers, the raw server's two (node:cluster) and wrk all run on
cores 0 and 1, since this 2-core machine has none to spare. wrk: 1 thread, ${CONNECTIONS} connections, \`--latency\`,
${options.seconds} s a run after ${warm} per target; ${options.rounds} rounds, the targets taking turns in each round.
requests/s and p50/p99 (cmi's, and the raw server's p99 beside them) are medians over the rounds, the ratios medians
of the rounds' ratios: a raw p99 over ${P99_GOAL_MS} ms says the machine itself (the scheduler, wrk on a shared core) stalled
requests that run, whatever served them. RSS: VmRSS of each cmi process right after its last run, what it holds
under the load; peak RSS: VmHWM by then, which also counts start-up and the first password check (argon2id
works in 19 MiB, docs/security.md, freed after); with \`--workers 2\`: the primary, then each worker.

### Figures to reach

${summaryHead}
${summary.join('\n')}
| p99 under ${P99_GOAL_MS} ms at ${CONNECTIONS} connections | yes | ${p99Row.join(' | ')} |
| RSS per process under the users scenarios' load (${fmt(options.users)} users) | <= ${RSS_GOAL_MB} MB | ${rssRow.join(' | ')} |

${scenarios.map((scenario) => scenarioTable(scenario, results.get(scenario) as Outcome[])).join('\n')}`;
}
