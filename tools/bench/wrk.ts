/**
 * wrk, the load generator of every throughput figure (docs/benchmarks.md): found or installed, run
 * pinned to a core with `taskset`, and its output read into numbers.
 */
import { execFileSync, spawnSync } from 'node:child_process';

export interface WrkResult {
  requestsPerSecond: number;
  /** Answers wrk read. */
  requests: number;
  /** Answers with a status of 400 or more (wrk's "Non-2xx or 3xx responses" counts those). */
  non2xx: number;
  /** Latency percentiles of `--latency`, in milliseconds. */
  p50: number;
  p99: number;
  /** wrk's "Socket errors" line, empty when there were none. */
  socketErrors: string;
  /** CPU seconds (user + system) wrk itself used; 0 when not measured. */
  clientCpuSeconds: number;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/** A wrk duration such as `635.00us`, `1.05ms` or `2.01s`, in milliseconds. */
export function parseDuration(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!match) throw new Error(`not a wrk duration: ${text}`);
  // Rounded to the microsecond: wrk prints two decimals, and 2.01 * 1000 is 2009.9999999999998 in floats.
  return Math.round(Number(match[1]) * (UNIT_MS[match[2] as string] as number) * 1000) / 1000;
}

/** What wrk printed with `--latency`, as numbers. */
export function parseWrk(output: string): Omit<WrkResult, 'clientCpuSeconds'> {
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(output)?.[1];
  const requests = /(\d+) requests in/.exec(output)?.[1];
  const percentile = (p: number) => {
    const value = new RegExp(`^\\s+${p}%\\s+(\\S+)\\s*$`, 'm').exec(output)?.[1];
    return value === undefined ? Number.NaN : parseDuration(value);
  };
  if (rate === undefined || requests === undefined) throw new Error(`wrk printed no rate:\n${output}`);
  return {
    requestsPerSecond: Number(rate),
    requests: Number(requests),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
    p50: percentile(50),
    p99: percentile(99),
    socketErrors: /Socket errors: (.+)/.exec(output)?.[1]?.trim() ?? '',
  };
}

/** bash's `times` line for its children (`0m1.230s 0m0.450s`): their user + system CPU seconds. */
export function parseChildTimes(line: string): number {
  const match = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(line.trim());
  if (!match) throw new Error(`not a line of bash's times: ${line}`);
  const [, userMinutes, userSeconds, systemMinutes, systemSeconds] = match.map(Number);
  return userMinutes! * 60 + userSeconds! + systemMinutes! * 60 + systemSeconds!;
}

export interface WrkOptions {
  seconds: number;
  connections: number;
  /** Pinned with `taskset -c`, e.g. '1' or '0,1'. */
  cores: string;
  headers?: Record<string, string>;
  /** A Lua script (`-s`) and the arguments after `--` it gets in init(). */
  script?: string;
  scriptArgs?: string[];
}

/** One wrk run (1 thread, `--latency`) pinned to `options.cores`. */
export function wrk(url: string, options: WrkOptions): WrkResult {
  const args = ['-c', options.cores, 'wrk', '-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency'];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`);
  if (options.script) args.push('-s', options.script);
  args.push(url);
  if (options.scriptArgs) args.push('--', ...options.scriptArgs);
  // bash's `times` prints the CPU its children used: wrk's, without another tool.
  const out = execFileSync('bash', ['-c', 'taskset "$@" && times', 'wrk', ...args], { encoding: 'utf8' });
  return { ...parseWrk(out), clientCpuSeconds: parseChildTimes(out.trim().split('\n').at(-1) ?? '') };
}

const found = (command: string) => spawnSync('bash', ['-c', `command -v ${command}`]).status === 0;

/**
 * Makes sure wrk and taskset are there: wrk is installed from Debian (`apt-get install -y wrk`, the
 * one package source this machine reaches) when missing. Exits the process when that fails.
 */
export function ensureWrk(): void {
  if (!found('taskset')) {
    console.error('taskset is missing: install util-linux (apt-get install -y util-linux)');
    process.exit(1);
  }
  if (found('wrk')) return;
  console.error('wrk is missing: apt-get install -y wrk');
  const sudo = process.getuid?.() === 0 || !found('sudo') ? [] : ['sudo'];
  const [file, ...args] = [...sudo, 'apt-get', 'install', '-y', 'wrk'];
  const install = spawnSync(file, args, { stdio: 'inherit' });
  if (install.status !== 0 || !found('wrk')) {
    console.error('Could not install wrk with apt-get (Debian is the only package source reachable here; try `apt-get update` first). The benchmarks need it.');
    process.exit(1);
  }
}
