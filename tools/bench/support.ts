import { type ChildProcess, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** CPU seconds (user + system) a process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
}

/** A process and all its descendants (a cluster primary and its workers), the process first. */
export function processTree(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return [pid, ...children.flatMap(processTree)];
}

/** cpuSeconds of a process and all its descendants. */
export function treeCpuSeconds(pid: number): number {
  return processTree(pid).reduce((sum, each) => sum + cpuSeconds(each), 0);
}

/** A memory line of /proc/PID/status in MB: VmHWM (the peak resident set so far) or VmRSS (now). */
export function residentMb(pid: number, line: 'VmHWM' | 'VmRSS'): number {
  const kb = new RegExp(`^${line}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`/proc/${pid}/status has no ${line}`);
  return Number(kb) / 1024;
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

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** 12345 -> "12,345": figures in the document. */
export const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
