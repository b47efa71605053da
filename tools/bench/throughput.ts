/**
 * The throughput figures and their goals (docs/benchmarks.md#throughput): each scenario against two
 * references answering the bytes cmi answered, in the same run, the targets taking turns: a raw
 * node:http server and a bare fastify server that checks the same credential; on SQLite and
 * PostgreSQL, with `--workers 1` and `--workers 2`.
 */
import type { ChildProcess } from 'node:child_process';
import { type RunningServer, startServer } from '../shared/server-process.js';
import { BASIC, DATABASE_NAMES, type DatabaseKind, type SharedDatabases } from './datasets.js';
import { provenance, type RunInfo } from './document.js';
import { answerOf, bareAuthOf, type RawAnswer, startBareFastify, startRawServer } from './raw-server.js';
import { fmt, median, processTree, residentMb, stop } from './support.js';
import { wrk, type WrkResult } from './wrk.js';

const PORT = 3321;
const RAW_PORT = 3322;
const FASTIFY_PORT = 3323;
const HEADERS_FASTIFY_PORT = 3324;
const CONNECTIONS = 50;
const USERS_PAGE = '/users.json?page=4&per_page=2';
const ERRORS = '/sysadmin_tools/infrastructure/errors';
/** cmi's p99 latency at 50 connections should stay under this many times the raw server's in the same run. */
const P99_GOAL_TIMES_RAW = 2;
const RSS_GOAL_MB = 100;

export interface Scenario {
  name: string;
  /** Shown in --quick runs too. */
  quick: boolean;
  /** The least cmi / bare fastify (for the 304: cmi's 304 / cmi's 200 of the same URL). */
  goal: number;
  path: (errors: number) => string;
  credentials: 'basic' | 'cookie' | 'etag';
  /** Runs on the users of the database (its RSS counts as "under the 1M-user load"). */
  users: boolean;
}

export const SCENARIOS: Scenario[] = [
  { name: '`GET /version.json`, Basic auth', quick: true, goal: 0.8, path: () => '/version.json', credentials: 'basic', users: true },
  { name: `\`GET ${USERS_PAGE}\`, Basic auth`, quick: true, goal: 0.8, path: () => USERS_PAGE, credentials: 'basic', users: true },
  { name: 'the same in XML', quick: true, goal: 0.8, path: () => USERS_PAGE.replace('.json', '.xml'), credentials: 'basic', users: true },
  { name: 'the same with the session cookie instead of Basic', quick: true, goal: 0.8, path: () => USERS_PAGE, credentials: 'cookie', users: true },
  { name: `\`GET ${ERRORS}/:id.xml\``, quick: true, goal: 0.8, path: (errors) => `${ERRORS}/${Math.floor(errors / 2)}.xml`, credentials: 'basic', users: false },
  { name: `\`GET ${ERRORS}.json?host=hv-17\` (a filtered list page)`, quick: false, goal: 0.8, path: () => `${ERRORS}.json?host=hv-17`, credentials: 'basic', users: false },
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
  name: 'raw' | 'fastify' | 'fastify + headers' | 'cmi' | 'cmi 200';
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
  let bare: ChildProcess | undefined;
  let headed: ChildProcess | undefined;
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
    bare = await startBareFastify(answer, path.split('?')[0] as string, bareAuthOf(headers), { port: FASTIFY_PORT, cores: serverCores, processes: workers });
    headed = await startBareFastify(answer, path.split('?')[0] as string, bareAuthOf(headers), { port: HEADERS_FASTIFY_PORT, cores: serverCores, processes: workers, perRequestHeaders: true });
    const targets: Target[] = [
      { name: 'raw', url: `http://127.0.0.1:${RAW_PORT}${path}`, headers },
      { name: 'fastify', url: `http://127.0.0.1:${FASTIFY_PORT}${path}`, headers },
      { name: 'fastify + headers', url: `http://127.0.0.1:${HEADERS_FASTIFY_PORT}${path}`, headers },
      { name: 'cmi', url: `${base}${path}`, headers },
    ];
    for (const target of targets.slice(0, 3)) {
      // The headers reference makes its own X-Request-Id and X-Runtime: the same kind of value, not the same one.
      const comparable = target.name === 'fastify + headers' ? withOwnHeaders : (same: RawAnswer) => same;
      const reference = await answerOf(await fetch(target.url, { headers }));
      if (JSON.stringify(comparable(reference)) !== JSON.stringify(comparable(answer))) {
        throw new Error(`${path}: the ${target.name} reference does not answer what cmi answered: ${JSON.stringify(reference)} vs ${JSON.stringify(answer)}`);
      }
    }
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
    if (bare) await stop(bare);
    if (headed) await stop(headed);
    if (server) await server.stop();
  }
}

/** `answer` with its X-Request-Id and X-Runtime values, when of the right form, as the name of that form. */
function withOwnHeaders(answer: RawAnswer): RawAnswer {
  const { 'x-request-id': id = '', 'x-runtime': runtime = '', ...rest } = answer.headers;
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id) ? 'a UUID' : id;
  const seconds = /^\d+\.\d{6}$/.test(runtime) ? 'seconds, six decimals' : runtime;
  return { ...answer, headers: { ...rest, 'x-request-id': uuid, 'x-runtime': seconds } };
}

/** Each round's ratio of a figure of `over` to the same figure of `under` (rounds measured seconds apart). */
const roundRatios = (outcome: Outcome, over: Target['name'], under: Target['name'], figure: (run: WrkResult) => number) => {
  const below = outcome.runs.get(under) as WrkResult[];
  return (outcome.runs.get(over) as WrkResult[]).map((run, k) => figure(run) / figure(below[k] as WrkResult));
};
const rate = (run: WrkResult) => run.requestsPerSecond;
/** `0.84x (0.80-0.88)`: the median of the rounds' ratios and their spread. */
const ratioText = (ratios: number[]) => `${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`;
const rateOf = (outcome: Outcome, target: Target['name']) => median((outcome.runs.get(target) as WrkResult[]).map((run) => run.requestsPerSecond));
const latencyOf = (outcome: Outcome, which: 'p50' | 'p99', target: Target['name'] = 'cmi') => median((outcome.runs.get(target) as WrkResult[]).map((run) => run[which]));
/** cmi's p99 over the raw server's p99 of the same round, the median over the rounds. */
const p99TimesRaw = (outcome: Outcome) => median(roundRatios(outcome, 'cmi', 'raw', (run) => run.p99));
const failedOf = (outcome: Outcome) => [...outcome.runs.values()].flat().reduce((sum, run) => sum + run.non2xx, 0);
/** The reference a scenario's goal is about: bare fastify, or for the 304 cmi's own 200. */
const goalReference = (scenario: Scenario): Target['name'] => (scenario.credentials === 'etag' ? 'cmi 200' : 'fastify');
const goalRatios = (scenario: Scenario, outcome: Outcome) => roundRatios(outcome, 'cmi', goalReference(scenario), rate);
const verdict = (ratios: number[], goal: number) => `${ratioText(ratios)} ${median(ratios) >= goal ? 'reached' : '**missed**'}`;
const rssText = (rss: number[]) => (rss.length === 1 ? rss[0]!.toFixed(0) : `${rss[0]!.toFixed(0)} (primary), ${rss.slice(1).map((mb) => mb.toFixed(0)).join(', ')}`);
const setting = (outcome: Outcome) => `${DATABASE_NAMES[outcome.kind]}, \`--workers ${outcome.workers}\``;

function scenarioTable(scenario: Scenario, outcomes: Outcome[]): string {
  const etag = scenario.credentials === 'etag';
  const head = etag
    ? '| database, workers | cmi 304 requests/s | cmi 200 requests/s | 304 / 200 | fastify 304 requests/s | raw 304 requests/s | cmi 304 / fastify | cmi 304 / raw | p50 ms | p99 ms | raw p99 ms | p99 / raw p99 | RSS MB | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
    : '| database, workers | cmi requests/s | fastify requests/s | raw requests/s | cmi / fastify | cmi / raw | fastify / raw | p50 ms | p99 ms | raw p99 ms | p99 / raw p99 | RSS MB | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|';
  const rows = outcomes.map((outcome) => {
    const times = p99TimesRaw(outcome);
    const tail = `${latencyOf(outcome, 'p50').toFixed(2)} | ${latencyOf(outcome, 'p99').toFixed(2)} | ${latencyOf(outcome, 'p99', 'raw').toFixed(2)} | ${times.toFixed(2)}x${times <= P99_GOAL_TIMES_RAW ? '' : ' **over**'} | ${rssText(outcome.rss)} | ${rssText(outcome.peakRss)} |`;
    return etag
      ? `| ${setting(outcome)} | ${fmt(rateOf(outcome, 'cmi'))} | ${fmt(rateOf(outcome, 'cmi 200'))} | ${verdict(goalRatios(scenario, outcome), scenario.goal)} | ${fmt(rateOf(outcome, 'fastify'))} | ${fmt(rateOf(outcome, 'raw'))} | ${ratioText(roundRatios(outcome, 'cmi', 'fastify', rate))} | ${ratioText(roundRatios(outcome, 'cmi', 'raw', rate))} | ${tail}`
      : `| ${setting(outcome)} | ${fmt(rateOf(outcome, 'cmi'))} | ${fmt(rateOf(outcome, 'fastify'))} | ${fmt(rateOf(outcome, 'raw'))} | ${verdict(goalRatios(scenario, outcome), scenario.goal)} | ${ratioText(roundRatios(outcome, 'cmi', 'raw', rate))} | ${ratioText(roundRatios(outcome, 'fastify', 'raw', rate))} | ${tail}`;
  });
  const failed = outcomes.filter((outcome) => failedOf(outcome) > 0).map((outcome) => `${setting(outcome)}: **${fmt(failedOf(outcome))} answers of 400 or more**`);
  return `### ${scenario.name}\n\nGoal: ${etag ? '304 / 200' : 'cmi / bare fastify'} at least ${scenario.goal.toFixed(2)}x.\n\n${head}\n${rows.join('\n')}\n${failed.length > 0 ? `\n${failed.join('; ')}.\n` : ''}`;
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
    const cells = (results.get(scenario) as Outcome[]).map((outcome) => verdict(goalRatios(scenario, outcome), scenario.goal));
    return `| ${scenario.name} | >= ${scenario.goal.toFixed(2)}x | ${cells.join(' | ')} |`;
  });
  const p99Row = settings.map((_, k) => {
    const outcomes = scenarios.map((scenario) => (results.get(scenario) as Outcome[])[k] as Outcome);
    const over = outcomes.filter((outcome) => p99TimesRaw(outcome) > P99_GOAL_TIMES_RAW).length;
    const worst = Math.max(...outcomes.map(p99TimesRaw));
    return `${over === 0 ? 'yes, every scenario' : `**no**: ${over} of ${scenarios.length}`} (at most ${worst.toFixed(2)}x)`;
  });
  const rssRow = settings.map((_, k) => {
    const outcomes = scenarios.filter((scenario) => scenario.users).map((scenario) => (results.get(scenario) as Outcome[])[k] as Outcome);
    const most = Math.max(...outcomes.flatMap((outcome) => outcome.rss));
    const peak = Math.max(...outcomes.flatMap((outcome) => outcome.peakRss));
    return `${most.toFixed(0)} MB ${most <= RSS_GOAL_MB ? 'reached' : '**missed**'} (peak ${peak.toFixed(0)} MB)`;
  });
  const headersHead = `| scenario | ${settings.map((outcome) => `${setting(outcome)}: fastify + headers / bare fastify | cmi / fastify + headers`).join(' | ')} |\n|---|${settings.map(() => '---|---|').join('')}`;
  const headersRows = scenarios.map((scenario) => {
    const cells = (results.get(scenario) as Outcome[]).map((outcome) => `${ratioText(roundRatios(outcome, 'fastify + headers', 'fastify', rate))} | ${ratioText(roundRatios(outcome, 'cmi', 'fastify + headers', rate))}`);
    return `| ${scenario.name} | ${cells.join(' | ')} |`;
  });
  const warm = options.warmUpSeconds > 0 ? `${options.warmUpSeconds} s of wrk` : '300 sequential requests';
  return `
## Throughput against bare fastify and raw node:http

${provenance(options.info)}

cmi is what \`npm start\` runs (bin/cmi.js and dist/, compiled by the run), on one database holding
${fmt(options.users)} users and ${fmt(options.errors)} infrastructure errors (tools/bench/datasets.ts). For every scenario a fresh
\`cmi serve --workers N\` starts and is asked once; then three references start (tools/bench/raw-server.ts), each
answering every request with what cmi answered (status, body and headers, but Date, Connection and
Keep-Alive, which node:http adds itself; the run checks the bytes are the same):

- **bare fastify**, the reference of the goals: fastify with one route, the scenario's path, and the least work
  any fastify server must do with the same credential on every request: Basic, the Authorization header compared
  with the expected one in constant time (\`crypto.timingSafeEqual\`); the session cookie, its value read from the
  Cookie header and looked up in a Map of sessions; 401 otherwise. No other hook, no logger. cmi / bare fastify is
  thus what cmi costs beyond fastify and a check of the credential it must make anyway: its gate, routing,
  headers and rendering.
- **fastify + headers**: bare fastify that also makes anew, on every answer, the two headers whose values
  docs/api.md#response-headers wants new each time: X-Request-Id (a random UUID, fastify's \`genReqId\`) and
  X-Runtime (fastify's \`reply.elapsedTime\`); the other bytes are cmi's, the run checks these two by their form.
  fastify + headers / bare fastify is what those two headers alone cost any fastify server; not a goal.
- **raw node:http**: \`res.writeHead\` and \`res.end\` of the same bytes, no check: what the machine allows.

With \`--workers 1\` cmi and the references are pinned to core 0 and wrk to core 1; with \`--workers 2\` cmi's two
workers, each reference's two (node:cluster) and wrk all run on cores 0 and 1, since this 2-core machine has none
to spare. wrk: 1 thread, ${CONNECTIONS} connections, \`--latency\`, ${options.seconds} s a run after ${warm} per target; ${options.rounds} rounds, the
four targets taking turns in each round. requests/s and p50/p99 are medians over the rounds; a ratio is the median
of the rounds' ratios, with their spread (min-max) in brackets. The latency goal is relative too: cmi's p99 at most
${P99_GOAL_TIMES_RAW}x the raw server's p99 of the same round (an absolute figure on this machine says more about the scheduler and
wrk on a shared core than about the server). RSS: VmRSS of each cmi process right after its last run, what it
holds under the load; peak RSS: VmHWM by then, which also counts start-up and the first password check
(argon2id works in 19 MiB, docs/security.md, freed after); with \`--workers 2\`: the primary, then each worker.

### Figures to reach

${summaryHead}
${summary.join('\n')}
| cmi p99 at most ${P99_GOAL_TIMES_RAW}x raw p99 at ${CONNECTIONS} connections | yes | ${p99Row.join(' | ')} |
| RSS per process under the users scenarios' load (${fmt(options.users)} users) | <= ${RSS_GOAL_MB} MB | ${rssRow.join(' | ')} |

### What the per-request headers cost

The same rounds, with fastify + headers between bare fastify and cmi: the first ratio is what making X-Request-Id
and X-Runtime on each answer costs fastify itself, the second what cmi costs beyond that.

${headersHead}
${headersRows.join('\n')}

${scenarios.map((scenario) => scenarioTable(scenario, results.get(scenario) as Outcome[])).join('\n')}`;
}
