/**
 * Where the time goes (docs/benchmarks.md#profile): for each throughput scenario, cmi under wrk with
 * `node --cpu-prof`, its CPU time split by what ran (Node's own HTTP and socket code, fastify, cmi,
 * the database driver, the garbage collector), and the CPU each answer cost cmi, a bare fastify
 * server and the raw node:http server answering the same bytes.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../shared/server-process.js';
import { DATABASE_NAMES, type DatabaseKind, type SharedDatabases } from './datasets.js';
import { provenance, type RunInfo } from './document.js';
import { answerOf, bareAuthOf, startBareFastify, startRawServer } from './raw-server.js';
import { cpuSeconds, stop } from './support.js';
import { credentialsFor, SCENARIOS } from './throughput.js';
import { wrk } from './wrk.js';

const PORT = 3341;
const RAW_PORT = 3342;
const FASTIFY_PORT = 3343;
const CONNECTIONS = 50;

export interface ProfileOptions {
  info: RunInfo;
  data: SharedDatabases;
  kinds: DatabaseKind[];
  users: number;
  errors: number;
  seconds: number;
}

const PARTS = ['Node core', 'fastify', 'cmi', 'database', 'GC', 'V8'] as const;
type Part = (typeof PARTS)[number];

/** What a profile's sample ran, by the function's script. */
function partOf(functionName: string, url: string): Part | undefined {
  if (functionName === '(idle)') return undefined;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)') return 'V8';
  if (/node_modules\/(kysely|better-sqlite3|pg|pg-[a-z-]+)\//.test(url)) return 'database';
  if (url.includes('/dist/')) return 'cmi';
  if (url.includes('node_modules/')) return 'fastify';
  return 'Node core';
}

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  samples: number[];
  timeDeltas: number[];
}

/** Busy time by part, and the heaviest functions outside Node core, over samples after `skipMicros` (start-up). */
function summarise(profile: Profile, skipMicros: number) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const parts = new Map<Part, number>();
  const functions = new Map<string, number>();
  let at = 0;
  let busy = 0;
  profile.samples.forEach((id, k) => {
    at += profile.timeDeltas[k] ?? 0;
    const frame = nodes.get(id);
    if (at < skipMicros || !frame) return;
    const part = partOf(frame.functionName, frame.url);
    if (!part) return;
    const micros = profile.timeDeltas[k + 1] ?? 0;
    busy += micros;
    parts.set(part, (parts.get(part) ?? 0) + micros);
    if (part === 'cmi' || part === 'fastify' || part === 'database') {
      const name = `${frame.functionName || '(anonymous)'} (${frame.url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/')})`;
      functions.set(name, (functions.get(name) ?? 0) + micros);
    }
  });
  const share = (micros: number) => (100 * micros) / busy;
  return {
    parts: PARTS.map((part) => share(parts.get(part) ?? 0)),
    top: [...functions].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([name, micros]) => `${name} ${share(micros).toFixed(1)}%`),
  };
}

/** CPU microseconds a server spent an answer over one wrk run. */
function cpuPerAnswer(pid: number, url: string, headers: Record<string, string>, seconds: number): number {
  wrk(url, { headers, seconds: 1, connections: CONNECTIONS, cores: '1' });
  const before = cpuSeconds(pid);
  const run = wrk(url, { headers, seconds, connections: CONNECTIONS, cores: '1' });
  return ((cpuSeconds(pid) - before) * 1e6) / run.requests;
}

interface Row {
  setting: string;
  scenario: string;
  raw: number;
  fastify: number;
  cmi: number;
  parts: number[];
  top: string[];
}

async function profileScenario(kind: DatabaseKind, url: string, scenario: (typeof SCENARIOS)[number], options: ProfileOptions): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'cmi-bench-profile-'));
  const started = performance.now();
  const server = await startServer({ DATABASE_URL: url, CMI_ERRORS_RATE_LIMIT: '1000000' }, [], {
    port: PORT, cores: '0', stderr: 'inherit', program: 'built', nodeArguments: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
  });
  const readyMicros = (performance.now() - started) * 1000;
  let raw: ChildProcess | undefined;
  let bare: ChildProcess | undefined;
  try {
    const path = scenario.path(options.errors);
    const base = `http://127.0.0.1:${PORT}`;
    const headers = await credentialsFor(scenario, `${base}${path}`);
    const answer = await answerOf(await fetch(`${base}${path}`, { headers }));
    raw = await startRawServer(answer, { port: RAW_PORT, cores: '0' });
    bare = await startBareFastify(answer, path.split('?')[0] as string, bareAuthOf(headers), { port: FASTIFY_PORT, cores: '0' });
    const cmi = cpuPerAnswer(server.child.pid as number, `${base}${path}`, headers, options.seconds);
    const rawCost = cpuPerAnswer(raw.pid as number, `http://127.0.0.1:${RAW_PORT}${path}`, headers, options.seconds);
    const fastifyCost = cpuPerAnswer(bare.pid as number, `http://127.0.0.1:${FASTIFY_PORT}${path}`, headers, options.seconds);
    await server.stop();
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('cmi wrote no CPU profile');
    // Start-up and the first answers (argon2id, the first queries) are left out: the half second after ready.
    const summary = summarise(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile, readyMicros + 500_000);
    return { setting: DATABASE_NAMES[kind], scenario: scenario.name, raw: rawCost, fastify: fastifyCost, cmi, ...summary };
  } finally {
    if (raw) await stop(raw);
    if (bare) await stop(bare);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function profileSection(options: ProfileOptions): Promise<string> {
  const rows: Row[] = [];
  for (const kind of options.kinds) {
    const { url } = await options.data.get(kind, { users: options.users, errors: options.errors });
    for (const scenario of SCENARIOS) {
      console.log(`profile: ${DATABASE_NAMES[kind]}: ${scenario.name}`);
      rows.push(await profileScenario(kind, url, scenario, options));
    }
  }
  const us = (micros: number) => micros.toFixed(0);
  const costs = rows.map((row) => `| ${row.scenario} | ${row.setting} | ${us(row.raw)} | ${us(row.fastify)} | ${us(row.cmi)} | ${(row.raw / row.fastify).toFixed(2)}x | ${(row.raw / row.cmi).toFixed(2)}x |`);
  const parts = rows.map((row) => `| ${row.scenario} | ${row.setting} | ${row.parts.map((share) => `${share.toFixed(1)}%`).join(' | ')} | ${row.top.join('; ')} |`);
  return `
## Where the time goes (CPU profiles)

${provenance(options.info)}

For each throughput scenario, on ${options.users.toLocaleString('en-US')} users and ${options.errors.toLocaleString('en-US')} errors, \`--workers 1\`: cmi (dist/) runs
under \`node --cpu-prof\` pinned to core 0, wrk (1 thread, ${CONNECTIONS} connections, 1 s of warm-up then ${options.seconds} s) on core 1;
then a raw node:http server and a bare fastify server (one route answering the same status, headers and bytes
after the minimal check of the same credential, as in the throughput section) are driven the same way. CPU per answer: the server process's user + system CPU time (/proc)
over the run, divided by the answers wrk read: it depends less than requests/s on what else the machine runs, but
not nothing (cache and scheduler contention): compare the three servers of one row, not rows or runs.
raw / fastify is the most any fastify server can reach on that answer; raw / cmi what cmi reaches.

| scenario | database | raw µs/answer | bare fastify µs/answer | cmi µs/answer | raw / fastify | raw / cmi |
|---|---|---|---|---|---|---|
${costs.join('\n')}

cmi's busy CPU time by what ran (samples of the profile, start-up and the first half second left out):
Node core is Node's HTTP parser, headers, sockets and streams (the writes to the socket alone are 40-50%);
fastify is fastify and its dependencies; cmi is dist/; database is kysely and the driver; V8 is compiled code
and native work the profiler cannot attribute. The heaviest functions outside Node core follow.

| scenario | database | ${PARTS.join(' | ')} | heaviest outside Node core |
|---|---|${PARTS.map(() => '---|').join('')}---|
${parts.join('\n')}

What is already done to each answer's cost (docs/architecture.md#the-path-of-a-request): credentials checked
moments ago on the same kept-alive connection, Basic or the session cookie, are answered from that connection's
last check (no HMAC, no lookup); a users page, a tracker page and an error's record are kept rendered until the
data they show changes in any process (docs/architecture.md#how-cached-pages-stay-right), so the common answer is
one map lookup and no statement; ETags of recent bodies are remembered by text; the SQL of the hot statements
is compiled once; one \`onRequest\` hook and one \`onSend\` hook in all. What is left is fastify's own request
and reply path (raw / fastify above) and cmi's gate, routing and headers (about a tenth of the CPU). Going
further means answering the hot requests before fastify from a table of known answers: a second request path
that would have to repeat every rule of the gate (credentials, lockout, limits, formats, headers) and stay in
step with it, which this code base does not take on for the last tenths of a ratio.
`;
}
