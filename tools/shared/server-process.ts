import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// How the tests and the benchmarks run cmi as a process of its own: test/support/cli.ts re-exports it for the
// tests, tools/bench imports it from here (tools/ never imports test/: docs/architecture.md#tests).

/**
 * How a test or benchmark runs the `cmi` command: `sources` runs the code as it is now, never a dist/
 * left from an older build: the copy of src/ that tools/run-tests.ts compiled for its run (named by
 * CMI_TEST_SOURCES_JS; tools/shared/compiled-sources.ts), or src/cli/main.ts through tsx; `built` runs
 * bin/cmi.js, which runs dist/ (what `npm start` runs: build it first, `npm run build`); `{ bin }`
 * runs another copy's bin/cmi.js (test/built-command.test.ts, which checks bin/cmi.js and the build).
 */
export type Program = 'sources' | 'built' | { bin: string };

/** The arguments after `node` that run `cmi`. */
export function programArguments(program: Program): string[] {
  // An absolute URL for tsx: the child resolves `--import` from its working directory, not from here.
  if (program === 'sources') {
    const compiled = process.env.CMI_TEST_SOURCES_JS;
    if (compiled) return ['--enable-source-maps', join(compiled, 'cli', 'main.js')];
    return ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url))];
  }
  return [program === 'built' ? fileURLToPath(new URL('../../bin/cmi.js', import.meta.url)) : program.bin];
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `file` with `args` to completion, collecting what it prints; `stdin` is written to it and closed. */
export function runProgram(file: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; stdin?: string } = {}): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: options.env ?? process.env, cwd: options.cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A program that exits without reading its input (find, in the backup unit's drill) closes the
    // pipe: EPIPE is then its answer to the input, not a failure of the run, which its exit code tells.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(options.stdin ?? '');
  });
}

export interface RunningServer {
  child: ChildProcess;
  baseUrl: string;
  /** Everything the server printed to stdout up to and including its start-up lines. */
  output: string;
  /** Everything it printed to stderr so far (nothing when stderr is inherited). */
  readonly errors: string;
  stop(): Promise<number | null>;
}

export interface ServerOptions {
  /** The port to listen on; 0 (the default) takes a free one. */
  port?: number;
  /** Pins the server (a cluster's workers too) to these CPUs with `taskset -c`, e.g. '0' or '0,1'. */
  cores?: string;
  /** The server's stderr: kept in `errors` (the default), or written to this process's own stderr. */
  stderr?: 'collect' | 'inherit';
  /** The sources through tsx (the default: tests), or bin/cmi.js running dist/ (benchmarks): see Program. */
  program?: Program;
  /** Node's own flags, before the program (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
  nodeArguments?: string[];
  /** Told everything the server prints to stderr as it arrives, before it listens too (with stderr 'collect'). */
  onStderr?: (everything: string) => void;
}

/** Starts `cmi serve` (with `args` after it) and waits until it says where it listens. */
export function startServer(env: Record<string, string>, args: string[] = [], options: ServerOptions = {}): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const command = [...(options.nodeArguments ?? []), ...programArguments(options.program ?? 'sources'), 'serve', '--port', String(options.port ?? 0), ...args];
    const [file, argv] = options.cores === undefined ? [process.execPath, command] : ['taskset', ['-c', options.cores, process.execPath, ...command]];
    const child = spawn(file, argv, {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', options.stderr === 'inherit' ? 'inherit' : 'pipe'],
    });
    let output = '';
    let stderr = '';
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
      options.onStderr?.(stderr);
    });
    child.stdout?.on('data', (chunk) => {
      output += chunk;
      const match = /cmi listening on (http:\/\/\S+)/.exec(output);
      if (match && /Try:|Log in with|Created administrator/.test(output.slice(match.index))) {
        setTimeout(() => resolve({
          child,
          baseUrl: match[1] as string,
          get output() { return output; },
          get errors() { return stderr; },
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        }), 50);
      }
    });
    child.on('error', reject);
    void exited.then((code) => reject(new Error(`cmi serve exited with ${code} before listening: ${stderr}`)));
  });
}
