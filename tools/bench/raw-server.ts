/**
 * The reference of every throughput figure (docs/benchmarks.md): a bare node:http server answering
 * every request with bytes cmi answered, status, headers and body, pinned like the cmi server it is
 * compared with, and with as many processes (node:cluster) as cmi's `--workers`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawServerOptions {
  port: number;
  /** `taskset -c` cores, as the cmi server's. */
  cores: string;
  /** Processes answering on the port: 1, or a node:cluster primary with this many workers. */
  processes?: number;
  /** Reads each request's body before answering (a POST's), as a server of reports must. */
  readBody?: boolean;
}

/** CommonJS run as a file (node:cluster forks the script it runs, which `node -e` has none of). */
const SOURCE = `
const cluster = require('node:cluster');
const http = require('node:http');
const { port, processes, readBody, status, headers, body } = JSON.parse(process.env.RAW_SERVER);
if (processes > 1 && cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < processes; i++) cluster.fork().on('listening', () => ++listening === processes && console.log('ready'));
} else {
  const bytes = Buffer.from(body, 'base64');
  const answer = (res) => { res.writeHead(status, headers); res.end(bytes); };
  http.createServer((req, res) => {
    if (!readBody) return answer(res);
    req.on('data', () => {});
    req.on('end', () => answer(res));
  }).listen(port, '127.0.0.1', () => processes > 1 || console.log('ready'));
}
`;

let scriptPath: string | undefined;

/** Copies what cmi answered: everything but the headers node:http adds to every answer itself. */
export async function answerOf(response: Response): Promise<RawAnswer> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) headers[name] = value;
  return { status: response.status, headers, body: await response.text() };
}

/** Starts the reference server and waits until it listens. */
export function startRawServer(answer: RawAnswer, options: RawServerOptions): Promise<ChildProcess> {
  if (scriptPath === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'cmi-bench-raw-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    scriptPath = join(dir, 'raw-server.cjs');
    writeFileSync(scriptPath, SOURCE);
  }
  const config = {
    port: options.port,
    processes: options.processes ?? 1,
    readBody: options.readBody ?? false,
    status: answer.status,
    headers: answer.headers,
    body: Buffer.from(answer.body).toString('base64'),
  };
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', ['-c', options.cores, process.execPath, scriptPath as string], {
      env: { ...process.env, RAW_SERVER: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout?.once('data', () => resolve(child));
    child.on('exit', (code) => reject(new Error(`the raw node:http server exited with ${code} before listening`)));
  });
}
