/**
 * The authentication cost figures of docs/benchmarks.md#auth, on one machine in one run:
 *  - authenticated `GET /users.json?page=4&per_page=2` with Basic auth, with the session cookie, and a
 *    raw node:http server answering the same bytes (each server pinned to core 0, wrk to core 1);
 *  - the CPU a burst of 1,000 wrong passwords against one login costs the server.
 * Part of `npm run bench` (`--only auth`).
 */
import type { ChildProcess } from 'node:child_process';
import { startServer } from '../shared/server-process.js';
import { BASIC, freshDatabase, seedUsers } from './datasets.js';
import { provenance, type RoundsOptions } from './document.js';
import { answerOf, startRawServer } from './raw-server.js';
import { cpuSeconds, median, stop } from './support.js';
import { wrk } from './wrk.js';

const PORT = 3301;
const RAW_PORT = 3302;
const PATH = '/users.json?page=4&per_page=2';
const CONNECTIONS = 16;

export async function authSection({ info, rounds: ROUNDS, seconds: SECONDS }: RoundsOptions): Promise<string> {
  const database = await freshDatabase('sqlite');
  await seedUsers(database.url, 10);
  const server = await startServer({ DATABASE_URL: database.url }, [], { port: PORT, cores: '0', stderr: 'inherit', program: 'built' });
  let raw: ChildProcess | undefined;
  try {
    const first = await fetch(`http://127.0.0.1:${PORT}${PATH}`, { headers: { authorization: BASIC } });
    const cookie = /(_cmi_session=[^;]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1];
    // Everything cmi sent, its session cookie too, except what node:http adds to every answer itself.
    const answer = await answerOf(first);
    if (first.status !== 200 || !cookie) throw new Error(`unexpected first answer ${first.status}`);
    raw = await startRawServer(answer, { port: RAW_PORT, cores: '0' });

    const targets: Array<[string, string, Record<string, string>]> = [
      ['raw node:http, same bytes', `http://127.0.0.1:${RAW_PORT}${PATH}`, {}],
      ['cmi, Basic auth', `http://127.0.0.1:${PORT}${PATH}`, { Authorization: BASIC }],
      ['cmi, session cookie', `http://127.0.0.1:${PORT}${PATH}`, { Cookie: cookie }],
    ];
    for (const [, target, headers] of targets) wrk(target, { headers, seconds: 2, connections: CONNECTIONS, cores: '1' });
    const rates = new Map<string, number[]>(targets.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, target, headers] of targets) {
        const result = wrk(target, { headers, seconds: SECONDS, connections: CONNECTIONS, cores: '1' });
        if (result.non2xx > 0) throw new Error(`${name}: ${result.non2xx} answers were not 2xx`);
        rates.get(name)?.push(result.requestsPerSecond);
      }
    }
    await stop(raw);
    raw = undefined;
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

${provenance(info)} Server pinned to core 0, wrk
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
    return report;
  } finally {
    if (raw) await stop(raw);
    await server.stop();
    await database.drop();
  }
}
