import { AsyncLocalStorage } from 'node:async_hooks';
import { resolve } from 'node:path';

/**
 * What one run of the `cmi` command reads and where it writes (docs/cli.md#running-in-process): its
 * environment, working directory and input, and its stdout and stderr. The real command runs on the
 * process's own (main.ts); a test runs commands in its own process, each with its own (run.ts, runCli).
 * Every reader in src/cli asks here, never `process`, so runs in one process never see each other's.
 */
export interface Sink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
  hasColors?(): boolean;
}

export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** The command's input: all of it (a test's), or a stream read to its end (the process's stdin). */
  readonly stdin: string | AsyncIterable<Buffer | string>;
  readonly stdout: Sink;
  readonly stderr: Sink;
}

interface Run {
  readonly io: CliIo;
  /** The exit code a command chose without failing (doctor's failed check, users import's refused rows). */
  exitCode: number | undefined;
  /** --quiet: no progress bar (docs/cli.md#progress). */
  quiet: boolean;
}

const runs = new AsyncLocalStorage<Run>();

/** Runs `body` as one run of the command on `io`: everything it calls, awaits or schedules sees this run. */
export const inRun = <T>(io: CliIo, body: () => Promise<T>): Promise<T> => runs.run({ io, exitCode: undefined, quiet: false }, body);

/** The exit code the current run's command chose (chooseExitCode), if it chose one. */
export const chosenExitCode = (): number | undefined => runs.getStore()?.exitCode;

/**
 * The current run's I/O; undefined outside one (a signal handler of `cmi serve`, which Node calls outside
 * any run: the process's own I/O then, as main.ts gives it).
 */
export const currentIo = (): CliIo | undefined => runs.getStore()?.io;

/** The exit code a command chose without failing; the command still ends normally. */
export function chooseExitCode(code: number): void {
  const run = runs.getStore();
  if (run === undefined) process.exitCode = code;
  else run.exitCode = code;
}

/** Asks the current run for no progress bar (--quiet). */
export function beQuiet(): void {
  const run = runs.getStore();
  if (run !== undefined) run.quiet = true;
}

/** Whether the current run was asked for no progress bar. */
export const quiet = (): boolean => runs.getStore()?.quiet === true;

/** The current run's environment. */
export const cliEnv = (): NodeJS.ProcessEnv => currentIo()?.env ?? process.env;

/** A path the user gave, from the current run's working directory. */
export const fromCwd = (path: string): string => resolve(currentIo()?.cwd ?? process.cwd(), path);

/** All of the command's input, its last line's newline dropped. */
export async function readStdin(): Promise<string> {
  const input: CliIo['stdin'] = currentIo()?.stdin ?? (process.stdin as AsyncIterable<Buffer>);
  if (typeof input === 'string') return input.replace(/\r?\n$/, '');
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}
