/**
 * Time to ready (docs/benchmarks.md#start): `cmi serve` (bin/cmi.js, dist/) started on an existing,
 * migrated database of 1,000,000 users, from spawn to its first 200 answer.
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { BASIC, DATABASE_NAMES, type DatabaseKind, type SharedDatabases } from './datasets.js';
import { provenance, type RunInfo } from './document.js';
import { fmt, median, residentMb, ROOT, stop } from './support.js';

const PORT = 3331;
const GOAL_MS = 500;
const IDLE_GOAL_MB = 100;

export interface StartOptions {
  info: RunInfo;
  data: SharedDatabases;
  kinds: DatabaseKind[];
  users: number;
  starts: number;
}

interface Start {
  ms: number;
  rssMb: number;
  /** The first list asked right after the first answer, and a first visit of another page a second later, in ms. */
  firstListMs: number;
  laterListMs: number;
  /** VmRSS 2 s after those, idle. */
  idleMb: number;
}

/** One GET with Basic auth, in ms; throws unless 200. */
async function timed(path: string): Promise<number> {
  const started = performance.now();
  const answer = await fetch(`http://127.0.0.1:${PORT}${path}`, { headers: { authorization: BASIC } });
  await answer.arrayBuffer();
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
  return performance.now() - started;
}

/** Spawns `cmi serve` pinned to core 0 and asks `GET /version.json` (Basic auth) every 2 ms until a 200. */
async function timeOneStart(url: string): Promise<Start> {
  const started = performance.now();
  const child = spawn('taskset', ['-c', '0', process.execPath, `${ROOT}bin/cmi.js`, 'serve', '--port', String(PORT)], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`cmi serve exited with ${child.exitCode} before answering`);
      if (performance.now() - started > 30_000) throw new Error('cmi serve did not answer within 30 s');
      try {
        const answer = await fetch(`http://127.0.0.1:${PORT}/version.json`, { headers: { authorization: BASIC } });
        await answer.arrayBuffer();
        if (answer.status === 200) {
          const ready = { ms: performance.now() - started, rssMb: residentMb(child.pid as number, 'VmRSS') };
          const firstListMs = await timed('/users.json?page=5&per_page=50');
          await sleep(1000);
          const laterListMs = await timed('/users.json?page=7&per_page=50');
          await sleep(2000);
          return { ...ready, firstListMs, laterListMs, idleMb: residentMb(child.pid as number, 'VmRSS') };
        }
      } catch {
        // Not listening yet.
      }
      await sleep(2);
    }
  } finally {
    await stop(child);
  }
}

/** The reference: a bare node:http server started the same way, from spawn to its first answer, in ms. */
async function timeBareNode(): Promise<number> {
  const started = performance.now();
  const child = spawn('taskset', ['-c', '0', process.execPath, '-e', `require('node:http').createServer((q, s) => s.end('{}')).listen(${PORT}, '127.0.0.1')`], { stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    for (;;) {
      if (performance.now() - started > 30_000) throw new Error('node did not answer within 30 s');
      try {
        const answer = await fetch(`http://127.0.0.1:${PORT}/`);
        await answer.arrayBuffer();
        return performance.now() - started;
      } catch {
        // Not listening yet.
      }
      await sleep(2);
    }
  } finally {
    await stop(child);
  }
}

export async function startSection(options: StartOptions): Promise<string> {
  const rows: string[] = [];
  for (const kind of options.kinds) {
    const { url } = await options.data.get(kind, { users: options.users });
    const starts: Start[] = [];
    const bare: number[] = [];
    // Taking turns with the reference, so the machine's mood weighs on both alike.
    for (let k = 0; k < options.starts; k++) {
      bare.push(await timeBareNode());
      starts.push(await timeOneStart(url));
    }
    const ms = median(starts.map((start) => start.ms));
    const ratio = median(starts.map((start, k) => start.ms / (bare[k] as number)));
    const list = (key: 'firstListMs' | 'laterListMs') => `${median(starts.map((start) => start[key])).toFixed(1)} (${starts.map((start) => start[key].toFixed(1)).join(', ')})`;
    const idle = median(starts.map((start) => start.idleMb));
    rows.push(`| ${DATABASE_NAMES[kind]} | ${ms.toFixed(0)} | ${ms < GOAL_MS ? 'yes' : '**no**'} | ${starts.map((start) => start.ms.toFixed(0)).join(', ')} | ${median(bare).toFixed(0)} (${bare.map((one) => one.toFixed(0)).join(', ')}); cmi ${ratio.toFixed(1)}x | ${median(starts.map((start) => start.rssMb)).toFixed(0)} | ${idle.toFixed(0)} (${starts.map((start) => start.idleMb.toFixed(0)).join(', ')}) ${idle <= IDLE_GOAL_MB ? '' : '**over**'} | ${list('firstListMs')} | ${list('laterListMs')} |`);
  }
  return `
## Start

${provenance(options.info)}

\`cmi serve\` (bin/cmi.js running dist/, one process, pinned to core 0) on an existing, migrated database of
${fmt(options.users)} users: from spawn to the first 200 answer to \`GET /version.json\` with Basic auth (asked every
2 ms; the first answer checks the password, argon2id); median of ${options.starts} starts. RSS: VmRSS at that answer,
and idle 3 s later (goal: ${IDLE_GOAL_MB} MB or less). Right after that first answer, the first list (\`GET /users.json?page=5&per_page=50\`),
then a second later a first visit of another page (\`page=7\`): the first list should cost what any later first visit does.
The reference, started in turn with each start of cmi: a bare node:http server (\`node -e\`, pinned alike) from spawn to
its first answer, which says how slow the machine is at the time.

| database | ms to ready | under ${GOAL_MS} ms | starts, ms | bare node:http started alike, ms (starts) | RSS at ready, MB | idle RSS, MB (starts) | first list, ms (starts) | a later first visit, ms (starts) |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
`;
}
