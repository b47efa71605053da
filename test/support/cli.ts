import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { runCli } from '../../src/cli/run.js';
import { type Finished, programArguments, runProgram } from '../../tools/shared/server-process.js';

export { type Finished, type Program, type RunningServer, type ServerOptions, runProgram, startServer } from '../../tools/shared/server-process.js';

/**
 * The environment of `cmi` run against the server at `url` as ADMIN (login, password), its configuration in
 * `home`, no API key, profile or colour from this process's environment, and an unused sqlite: DATABASE_URL.
 */
export function adminCliEnv(home: string, url: string, admin: { login: string; password: string }): Record<string, string> {
  return {
    XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: url, CMI_USER: admin.login, CMI_PASSWORD: admin.password, CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '',
    DATABASE_URL: `sqlite:${join(home, 'unused.sqlite3')}`,
  };
}

/**
 * Runs `cmi <args>` to completion in this process (src/cli/run.ts's runCli, docs/cli.md#running-in-process):
 * this process's environment with `env` laid over it, `stdin` as its whole input, `cwd` (else this
 * process's working directory) for the paths it is given, and stdout and stderr collected, neither a
 * terminal. A sqlite: DATABASE_URL is still read from this process's working directory (src/db/database-url.ts).
 */
export async function runCmi(args: string[], env: Record<string, string>, stdin?: string, cwd?: string): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env: { ...process.env, ...env },
    cwd: cwd ?? process.cwd(),
    stdin: stdin ?? '',
    stdout: { isTTY: false, write: (text: string) => (stdout += text) },
    stderr: { isTTY: false, write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/**
 * Runs `cmi <args>` to completion as its own process (the sources: see Program), for a test that needs
 * one: `cmi serve`, a process's exit, a working directory for a sqlite: path, a real pipe as its input.
 */
export function runCmiProcess(args: string[], env: Record<string, string>, stdin?: string, cwd?: string): Promise<Finished> {
  return runProgram(process.execPath, [...programArguments('sources'), ...args], { env: { ...process.env, ...env }, stdin, cwd });
}

/** Starts `cmi <args>` as its own process and returns it running, its stdout and stderr piped: a test that kills it part-way. */
export function spawnCmi(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [...programArguments('sources'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}
