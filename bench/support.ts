import { type ChildProcess, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { systemClock } from '../src/domain/clock.js';
import { hashPassword } from '../src/domain/passwords.js';
import { loadConfig } from '../src/config.js';
import { migrateToLatest, openDatabase } from '../src/store/database.js';
import { usersRepository } from '../src/store/users-repository.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface WrkResult {
  requestsPerSecond: number;
  requests: number;
  non2xx: number;
  latencyAvg: string;
  /** CPU seconds (user + system) wrk itself used. */
  clientCpuSeconds: number;
}

/** One wrk run pinned to `cores`: requests/s, non-2xx answers, mean latency and wrk's own CPU. */
export function wrk(url: string, headers: Record<string, string>, options: { seconds: number; connections: number; cores: string }): WrkResult {
  const args = ['-c', options.cores, 'wrk', '-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  // bash's `times` prints the CPU its children used: wrk's, without another tool.
  const out = execFileSync('bash', ['-c', 'taskset "$@" && times', 'wrk', ...args, url], { encoding: 'utf8' });
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1];
  const children = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/m.exec(out.trim().split('\n').at(-1) ?? '');
  if (!rps || !children) throw new Error(`wrk printed no rate:\n${out}`);
  const [, userMinutes, userSeconds, systemMinutes, systemSeconds] = children.map(Number);
  return {
    requestsPerSecond: Number(rps),
    requests: Number(/(\d+) requests in/.exec(out)?.[1]),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    latencyAvg: /Latency\s+(\S+)/.exec(out)?.[1] ?? '?',
    clientCpuSeconds: userMinutes! * 60 + userSeconds! + systemMinutes! * 60 + systemSeconds!,
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
}

/** cpuSeconds of a process and all its descendants (a cluster primary and its workers). */
export function treeCpuSeconds(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return cpuSeconds(pid) + children.reduce((sum, child) => sum + treeCpuSeconds(child), 0);
}

/**
 * Compiles src/ into dist/ (`npm run build`): a benchmark measures what `npm start` runs (bin/cmi.js,
 * startServer's `program: 'built'`), as the sources are now.
 */
export function buildDist(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
}

/** Stops a child process of a benchmark's own (cmi servers stop with their RunningServer.stop()). */
export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Replaces the part of docs/benchmarks.md between `<!-- name -->` markers with `text`. */
export function recordSection(name: string, text: string): void {
  const path = `${ROOT}docs/benchmarks.md`;
  let doc: string;
  try {
    doc = readFileSync(path, 'utf8');
  } catch {
    doc = '# Benchmarks\n';
  }
  const begin = `<!-- ${name} -->`;
  const end = `<!-- /${name} -->`;
  const block = `${begin}\n${text.trim()}\n${end}`;
  const start = doc.indexOf(begin);
  const stopAt = doc.indexOf(end);
  doc = start !== -1 && stopAt !== -1 ? doc.slice(0, start) + block + doc.slice(stopAt + end.length) : `${doc.trimEnd()}\n\n${block}\n`;
  execFileSync('tee', [path], { input: doc, stdio: ['pipe', 'ignore', 'inherit'] });
}

export function machine(): string {
  const cpu = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  return `${cpu}, ${execFileSync('nproc', { encoding: 'utf8' }).trim()} cores, Node ${process.version}`;
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** A migrated database with `admin` / `bench-password` and `count - 1` more users (one shared hash). */
export async function seedUsers(url: string, count: number): Promise<void> {
  const database = openDatabase(loadConfig({ DATABASE_URL: url }));
  await migrateToLatest(database);
  const users = usersRepository(database);
  const admin = await hashPassword('bench-password');
  const shared = await hashPassword('shared-password');
  const base = { first_name: 'Bench', last_name: 'User', time_zone: null, locale: null };
  await users.create({ ...base, login: 'admin', email: 'admin@bench.test', password_hash: admin, role: 'admin' }, systemClock());
  for (let i = 1; i < count; i++) {
    await users.create({ ...base, login: `user${i}`, email: `user${i}@bench.test`, password_hash: shared, role: 'user' }, systemClock());
  }
  await database.close();
}
