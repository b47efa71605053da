/**
 * The authentication cost figures of docs/benchmarks.md, on one machine in one run:
 *  - authenticated `GET /users.json?page=4&per_page=2` with Basic auth, with the session cookie, and a
 *    raw node:http server answering the same bytes (each server pinned to core 0, wrk to core 1);
 *  - the CPU a burst of 1,000 wrong passwords against one login costs the server.
 * Run: npm run bench:auth   (needs wrk and taskset: apt-get install wrk)
 * Writes the results into docs/benchmarks.md.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../test/support/cli.js';
import { buildDist, cpuSeconds, machine, median, recordSection, seedUsers, stop, wrk } from './support.js';

const PORT = 3301;
const RAW_PORT = 3302;
const PATH = '/users.json?page=4&per_page=2';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = 16;

/** A node:http server answering every request with these bytes and headers: the ceiling. */
function startRawServer(body: string, headers: Record<string, string>) {
  const source = `
    const http = require('node:http');
    const body = Buffer.from(${JSON.stringify(body)});
    const headers = ${JSON.stringify(headers)};
    http.createServer((req, res) => { res.writeHead(200, headers); res.end(body); }).listen(${RAW_PORT}, '127.0.0.1', () => console.log('ready'));`;
  return new Promise<ReturnType<typeof spawn>>((resolve) => {
    const child = spawn('taskset', ['-c', '0', process.execPath, '-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout?.once('data', () => resolve(child));
  });
}

buildDist();
const dir = mkdtempSync(join(tmpdir(), 'cmi-bench-'));
const url = `sqlite:${join(dir, 'cmi.sqlite3')}`;
await seedUsers(url, 10);
const server = await startServer({ DATABASE_URL: url }, [], { port: PORT, cores: '0', stderr: 'inherit', program: 'built' });
try {
  const basic = `Basic ${Buffer.from('admin:bench-password').toString('base64')}`;
  const first = await fetch(`http://127.0.0.1:${PORT}${PATH}`, { headers: { authorization: basic } });
  const body = await first.text();
  const cookie = /(_cmi_session=[^;]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1];
  if (first.status !== 200 || !cookie) throw new Error(`unexpected first answer ${first.status}`);
  // Everything cmi sent, its session cookie too, except what node:http adds to every answer itself.
  const copied: Record<string, string> = {};
  for (const [name, value] of first.headers) if (!['date', 'connection', 'keep-alive'].includes(name)) copied[name] = value;
  const raw = await startRawServer(body, copied);

  const targets: Array<[string, string, Record<string, string>]> = [
    ['raw node:http, same bytes', `http://127.0.0.1:${RAW_PORT}${PATH}`, {}],
    ['cmi, Basic auth', `http://127.0.0.1:${PORT}${PATH}`, { Authorization: basic }],
    ['cmi, session cookie', `http://127.0.0.1:${PORT}${PATH}`, { Cookie: cookie }],
  ];
  for (const [, target, headers] of targets) wrk(target, headers, { seconds: 2, connections: CONNECTIONS, cores: '1' });
  const rates = new Map<string, number[]>(targets.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, target, headers] of targets) {
      const result = wrk(target, headers, { seconds: SECONDS, connections: CONNECTIONS, cores: '1' });
      if (result.non2xx > 0) throw new Error(`${name}: ${result.non2xx} answers were not 2xx`);
      rates.get(name)?.push(result.requestsPerSecond);
    }
  }
  await stop(raw);
  const rawRate = median(rates.get(targets[0]![0])!);
  const basicRate = median(rates.get(targets[1]![0])!);
  const cookieRate = median(rates.get(targets[2]![0])!);

  // A burst of 1,000 wrong passwords against one login, 10 at a time.
  const before = cpuSeconds(server.child.pid as number);
  // Each guess a different password, as in a real attack (the same one would be checked once).
  const wrong = (n: number) => `Basic ${Buffer.from(`user1:wrong-password-${n}`).toString('base64')}`;
  const statuses = new Map<number, number>();
  for (let sent = 0; sent < 1000; sent += 10) {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, k) => fetch(`http://127.0.0.1:${PORT}/version.json`, { headers: { authorization: wrong(sent + k) } })),
    );
    for (const answer of answers) {
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      await answer.arrayBuffer();
    }
  }
  const burstCpu = cpuSeconds(server.child.pid as number) - before;

  const rows = targets.map(([name]) => {
    const rate = median(rates.get(name)!);
    return `| ${name} | ${Math.round(rate)} | ${(rate / rawRate).toFixed(2)}x | ${rates.get(name)!.map(Math.round).join(', ')} |`;
  });
  const report = `
## Authentication cost

\`npm run bench:auth\` on ${new Date().toISOString().slice(0, 10)}; ${machine()}. Server pinned to core 0, wrk
(1 thread, ${CONNECTIONS} connections, ${SECONDS} s, median of ${ROUNDS} rounds) to core 1; SQLite, 10 users, \`GET ${PATH}\`.
The raw server answers with cmi's first answer: its body and headers, the session cookie among them
(node:http adds Date and Connection to both).

| target | requests/s | vs raw | rounds |
|---|---|---|---|
${rows.join('\n')}

- Basic / cookie: **${(basicRate / cookieRate).toFixed(2)}x** (goal: at least 0.9x)
- Basic / raw node:http: **${(basicRate / rawRate).toFixed(2)}x** (goal: at least 0.5x)
- 1,000 different wrong passwords against one login, 10 at a time: **${burstCpu.toFixed(2)} s** of server CPU (goal: under 2 s);
  answers: ${[...statuses].map(([status, count]) => `${count} x ${status}`).join(', ')}.
`;
  console.log(report);
  recordSection('auth', report);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
