import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ThrowawayPostgres {
  url: string;
  /** SIGSTOP (true) or SIGCONT (false) to the server and every backend: a hung database. */
  freeze(frozen: boolean): void;
  stop(): void;
  start(): void;
  destroy(): void;
}

const binDir = () => `/usr/lib/postgresql/${readdirSync('/usr/lib/postgresql').sort().at(-1)}/bin`;

/**
 * A PostgreSQL server of the test's own, on its own port and data directory, that a test may freeze
 * or stop without touching the shared one. PostgreSQL refuses to run as root: as root it runs as the
 * `postgres` user.
 */
export async function throwawayPostgres(): Promise<ThrowawayPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'cmi-pg-'));
  const asPostgres = process.getuid?.() === 0;
  if (asPostgres) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, id('-u'), id('-g'));
  }
  const run = (command: string, args: string[]) => {
    const [file, all] = asPostgres ? ['runuser', ['-u', 'postgres', '--', join(binDir(), command), ...args]] : [join(binDir(), command), args];
    execFileSync(file, all, { stdio: 'ignore' });
  };
  const port = await freePort();
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-w', '-s', '-l', join(dir, 'log'), 'start']);
  start();
  const processes = (): number[] => {
    const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
    return [postmaster, ...children];
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    freeze(frozen) {
      for (const pid of processes()) process.kill(pid, frozen ? 'SIGSTOP' : 'SIGCONT');
    },
    stop: () => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-s', 'stop']),
    start,
    destroy() {
      try {
        for (const pid of processes()) process.kill(pid, 'SIGCONT');
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-s', 'stop']);
      } catch {
        // Already stopped.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
