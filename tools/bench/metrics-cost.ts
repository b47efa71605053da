/**
 * The CPU a request costs with metrics on against off (docs/benchmarks.md#metrics-cost), measured
 * with process.cpuUsage in the server process, not with wall time: it needs no quiet machine.
 *
 *   node --import tsx tools/bench/metrics-cost.ts [requests=20000] [rounds=3]
 *
 * Each round starts a server process with metrics off and one with them on (CMI_METRICS_TOKEN), in
 * turn, on a temporary SQLite database with one administrator; sends `requests` keep-alive
 * `GET /version.json` with Basic auth over a real socket (after a warm-up of the same size); and
 * reads the server's user+system CPU over exactly those requests. It prints the median of each.
 * That difference is at the mercy of a shared machine's noise, so it also runs one server with
 * metrics on under `--cpu-prof` and counts the samples whose stack passes through cmi's metrics
 * hooks (src/metrics/metrics.ts) or prom-client: the CPU the metrics themselves take, a request.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { hashPassword } from '../../src/users/passwords.js';
import { buildApp } from '../../src/app/app.js';
import { migrateToLatest, openDatabase } from '../../src/db/database.js';
import { ADMIN_ROLE_ID } from '../../src/roles/permissions.js';
import { usersRepository } from '../../src/users/users.store.js';

const PASSWORD = 'bench-password-1';

async function serve(): Promise<void> {
  const config = loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent' });
  const database = openDatabase(config);
  await migrateToLatest(database);
  const users = usersRepository(database);
  if ((await users.findAllByLoginOrEmail('bench')).length === 0) {
    await users.create({ login: 'bench', email: 'bench@example.com', password_hash: await hashPassword(PASSWORD), first_name: 'B', last_name: 'B', role_ids: [ADMIN_ROLE_ID], time_zone: null, locale: null }, new Date());
  }
  const app = await buildApp({ config, database, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  let started = process.cpuUsage();
  process.on('message', (message) => {
    if (message === 'start') {
      started = process.cpuUsage();
      process.send?.('started');
    } else if (message === 'stop') {
      const used = process.cpuUsage(started);
      process.send?.({ micros: used.user + used.system });
    } else if (message === 'exit') {
      void app.close().then(() => database.close()).then(() => process.exit(0));
    }
  });
  process.send?.({ port: (app.server.address() as { port: number }).port });
}

function ask<T>(child: ReturnType<typeof fork>, message: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (answer) => resolve(answer as T));
    child.send(message);
  });
}

async function load(port: number, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const auth = `Basic ${Buffer.from(`bench:${PASSWORD}`).toString('base64')}`;
  let next = 0;
  const one = () => new Promise<void>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/version.json', agent, headers: { authorization: auth } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
      res.resume().on('end', resolve);
    });
    req.on('error', reject).end();
  });
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < count) {
      next += 1;
      await one();
    }
  }));
  agent.destroy();
}

async function measure(metrics: boolean, requests: number, directory: string, profileDirectory?: string): Promise<number> {
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(directory, 'bench.sqlite3')}`, CMI_SPOOL_DIR: join(directory, 'spool'), ...(metrics ? { CMI_METRICS_TOKEN: 'bench-metrics-token-0123' } : {}) };
  const execArgv = profileDirectory ? [...process.execArgv, '--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${profileDirectory}`] : process.execArgv;
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { env, execArgv });
  const { port } = await new Promise<{ port: number }>((resolve) => child.once('message', (message) => resolve(message as { port: number })));
  await load(port, requests);
  await ask(child, 'start');
  await load(port, requests);
  const { micros } = await ask<{ micros: number }>(child, 'stop');
  child.send('exit');
  await new Promise((resolve) => child.once('exit', resolve));
  return micros / requests;
}

interface Profile {
  nodes: Array<{ id: number; callFrame: { url: string; functionName: string; lineNumber: number }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

/** Microseconds of samples whose stack passes through the metrics hooks or prom-client. */
function metricsMicros(profile: Profile): number {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const inMetrics = new Map<number, boolean>();
  const test = (id: number): boolean => {
    const known = inMetrics.get(id);
    if (known !== undefined) return known;
    const frame = byId.get(id)?.callFrame;
    const up = parent.get(id);
    // A module's own evaluation (line 0, no name) and making the metrics are start-up, not a request's cost.
    const running = frame !== undefined && (frame.functionName !== '' || frame.lineNumber > 0) && frame.functionName !== 'registerMetrics';
    const ours = frame !== undefined && (frame.url.includes('/src/metrics/metrics.ts') || frame.url.includes('/prom-client/'));
    const result = (ours && running) || (up !== undefined && test(up));
    inMetrics.set(id, result);
    return result;
  };
  let micros = 0;
  profile.samples.forEach((id, i) => {
    if (test(id)) micros += profile.timeDeltas[i] ?? 0;
  });
  return micros;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

if (process.argv.includes('--serve')) {
  await serve();
} else {
  const requests = Number(process.argv[2] ?? 20_000);
  const rounds = Number(process.argv[3] ?? 3);
  const directory = mkdtempSync(join(tmpdir(), 'cmi-metrics-cost-'));
  const off: number[] = [];
  const on: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      off.push(await measure(false, requests, directory));
      on.push(await measure(true, requests, directory));
      console.log(`round ${round + 1}: off ${off.at(-1)?.toFixed(1)} µs, on ${on.at(-1)?.toFixed(1)} µs of server CPU a request`);
    }
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  console.log(`median of ${rounds} rounds of ${requests} requests: off ${median(off).toFixed(1)} µs, on ${median(on).toFixed(1)} µs, metrics cost ${(median(on) - median(off)).toFixed(1)} µs a request`);
  const profiles = mkdtempSync(join(tmpdir(), 'cmi-metrics-profile-'));
  try {
    await measure(true, requests, directory, profiles);
    const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('no CPU profile written');
    const profile = JSON.parse(readFileSync(join(profiles, file), 'utf8')) as Profile;
    // The profiled server answered the warm-up and the measured requests: 2 x requests.
    console.log(`--cpu-prof, metrics on: ${(metricsMicros(profile) / (2 * requests)).toFixed(2)} µs a request in the metrics hooks and prom-client`);
  } finally {
    rmSync(profiles, { recursive: true, force: true });
    rmSync(directory, { recursive: true, force: true });
  }
}
