/**
 * The references of the throughput figures (docs/benchmarks.md): a bare node:http server answering
 * every request with bytes cmi answered, status, headers and body, and a bare fastify server answering
 * the same bytes from one route after the minimal check of the same credential; each pinned like the
 * cmi server it is compared with, and with as many processes (node:cluster) as cmi's `--workers`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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

/**
 * The bare fastify reference: one route (the request's path) answering the same bytes, after the least a
 * fastify server must do with the same credential on each request: Basic, the Authorization header
 * compared with the expected one in constant time; the session cookie, its value read from the Cookie
 * header and looked up in a Map of sessions. Anything else is a 401. No other hook, no logger.
 * With `perRequestHeaders`, it also makes anew the two headers whose values docs/api.md#response-headers
 * wants new on every answer: X-Request-Id, a random UUID (fastify's genReqId), and X-Runtime, the
 * seconds since the request arrived (fastify's reply.elapsedTime, written by cmi's secondsText); the rest
 * stay cmi's bytes.
 */
const FASTIFY_SOURCE = `
const cluster = require('node:cluster');
const { randomUUID, timingSafeEqual } = require('node:crypto');
const { port, processes, status, headers, body, path, auth, fastifyPath, perRequestHeaders, commonHeadersUrl } = JSON.parse(process.env.BARE_FASTIFY);
if (processes > 1 && cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < processes; i++) cluster.fork().on('listening', () => ++listening === processes && console.log('ready'));
} else {
  const fastify = require(fastifyPath)(perRequestHeaders ? { logger: false, genReqId: () => randomUUID() } : { logger: false });
  const bytes = Buffer.from(body, 'base64');
  const expected = auth.kind === 'basic' ? Buffer.from(auth.value) : undefined;
  // X-Runtime written by cmi's own function (compiled to dist/ by the run before any server starts).
  let secondsText;
  const loaded = perRequestHeaders ? import(commonHeadersUrl).then((module) => { secondsText = module.secondsText; }) : Promise.resolve();
  const sessions = new Map(auth.kind === 'cookie' ? [[auth.value, { userId: 1 }]] : []);
  const sessionOf = (cookie) => {
    if (cookie === undefined) return undefined;
    for (const part of cookie.split(';')) {
      const eq = part.indexOf('=');
      if (eq !== -1 && part.slice(0, eq).trim() === auth.name) return sessions.get(part.slice(eq + 1).trim());
    }
    return undefined;
  };
  const allowed = (request) => {
    if (expected !== undefined) {
      const given = request.headers.authorization;
      return given !== undefined && given.length === expected.length && timingSafeEqual(Buffer.from(given), expected);
    }
    return sessionOf(request.headers.cookie) !== undefined;
  };
  fastify.get(path, (request, reply) => {
    if (!allowed(request)) return reply.code(401).send('');
    // An empty body (a 304) sent as no payload: a Buffer would get fastify's application/octet-stream.
    reply.code(status).headers(headers);
    if (perRequestHeaders) reply.header('x-request-id', request.id).header('x-runtime', secondsText(reply.elapsedTime));
    reply.send(bytes.length === 0 ? undefined : bytes);
  });
  loaded.then(() => fastify.listen({ port, host: '127.0.0.1' })).then(() => processes > 1 || console.log('ready'));
}
`;

/** The credential the bare fastify server checks on each request, as a request of the scenario sends it. */
export type BareAuth = { kind: 'basic'; value: string } | { kind: 'cookie'; name: string; value: string };

/** The credential of a scenario's request headers as the bare fastify server checks it. */
export function bareAuthOf(headers: Record<string, string>): BareAuth {
  if (headers.Authorization !== undefined) return { kind: 'basic', value: headers.Authorization };
  const cookie = headers.Cookie ?? '';
  const eq = cookie.indexOf('=');
  return { kind: 'cookie', name: cookie.slice(0, eq), value: cookie.slice(eq + 1) };
}

let scriptPath: string | undefined;
let fastifyScriptPath: string | undefined;

function scriptFile(name: string, source: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'cmi-bench-ref-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}

function startPinned(script: string, cores: string, env: Record<string, string>, what: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', ['-c', cores, process.execPath, script], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout?.once('data', () => resolve(child));
    child.on('exit', (code) => reject(new Error(`the ${what} server exited with ${code} before listening`)));
  });
}

/**
 * Starts the bare fastify reference on `path` (no query) and waits until it listens: `answer` to a
 * request carrying `auth`, 401 to any other.
 */
export function startBareFastify(answer: RawAnswer, path: string, auth: BareAuth, options: Omit<RawServerOptions, 'readBody'> & { perRequestHeaders?: boolean }): Promise<ChildProcess> {
  fastifyScriptPath ??= scriptFile('bare-fastify.cjs', FASTIFY_SOURCE);
  const config = {
    perRequestHeaders: options.perRequestHeaders ?? false,
    commonHeadersUrl: new URL('../../dist/http/common-headers.js', import.meta.url).href,
    port: options.port,
    processes: options.processes ?? 1,
    status: answer.status,
    headers: answer.headers,
    body: Buffer.from(answer.body).toString('base64'),
    path,
    auth,
    fastifyPath: createRequire(import.meta.url).resolve('fastify'),
  };
  return startPinned(fastifyScriptPath, options.cores, { BARE_FASTIFY: JSON.stringify(config) }, 'bare fastify');
}

/** Copies what cmi answered: everything but the headers node:http adds to every answer itself. */
export async function answerOf(response: Response): Promise<RawAnswer> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) headers[name] = value;
  return { status: response.status, headers, body: await response.text() };
}

/** Starts the reference server and waits until it listens. */
export function startRawServer(answer: RawAnswer, options: RawServerOptions): Promise<ChildProcess> {
  scriptPath ??= scriptFile('raw-server.cjs', SOURCE);
  const config = {
    port: options.port,
    processes: options.processes ?? 1,
    readBody: options.readBody ?? false,
    status: answer.status,
    headers: answer.headers,
    body: Buffer.from(answer.body).toString('base64'),
  };
  return startPinned(scriptPath, options.cores, { RAW_SERVER: JSON.stringify(config) }, 'raw node:http');
}
