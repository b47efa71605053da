/**
 * The several-processes figure of docs/benchmarks.md#workers: authenticated `GET /users.json?page=4&per_page=2`
 * (Basic auth) with `cmi serve --workers 1` and `--workers 2`, on this machine's 2 cores. wrk (1 thread)
 * shares the cores with the workers, as a client on the same machine must.
 * Part of `npm run bench` (`--only workers`).
 */
import { startServer } from '../shared/server-process.js';
import { BASIC, freshDatabase, seedUsers } from './datasets.js';
import { provenance, type RoundsOptions } from './document.js';
import { median, treeCpuSeconds } from './support.js';
import { wrk } from './wrk.js';

const PORT = 3303;
const PATH = '/users.json?page=4&per_page=2';
const CONNECTIONS = 32;

export async function workersSection({ info, rounds: ROUNDS, seconds: SECONDS }: RoundsOptions): Promise<string> {
  const database = await freshDatabase('sqlite');
  await seedUsers(database.url, 10);
  const url = database.url;
  const basic = { Authorization: BASIC };
  const rates = new Map<number, number[]>([[1, []], [2, []]]);
  /** CPU microseconds a request costs the server (all its processes) and wrk. */
  const serverCost = new Map<number, number[]>([[1, []], [2, []]]);
  const clientCost = new Map<number, number[]>([[1, []], [2, []]]);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const workers of [1, 2]) {
        const server = await startServer({ DATABASE_URL: url }, ['--workers', String(workers)], { port: PORT, cores: '0,1', stderr: 'inherit', program: 'built' });
        try {
          wrk(`http://127.0.0.1:${PORT}${PATH}`, { headers: basic, seconds: 2, connections: CONNECTIONS, cores: '0,1' });
          const before = treeCpuSeconds(server.child.pid as number);
          const result = wrk(`http://127.0.0.1:${PORT}${PATH}`, { headers: basic, seconds: SECONDS, connections: CONNECTIONS, cores: '0,1' });
          if (result.non2xx > 0) throw new Error(`${result.non2xx} answers were not 2xx`);
          rates.get(workers)?.push(result.requestsPerSecond);
          serverCost.get(workers)?.push(((treeCpuSeconds(server.child.pid as number) - before) / result.requests) * 1e6);
          clientCost.get(workers)?.push((result.clientCpuSeconds / result.requests) * 1e6);
        } finally {
          await server.stop();
        }
      }
    }
    // Each round runs one worker, then two, back to back: their ratio compares like with like on a
    // machine whose speed drifts between rounds.
    const ratios = rates.get(2)!.map((rate, round) => rate / rates.get(1)![round]!);
    const server = median(serverCost.get(1)!);
    const client = median(clientCost.get(1)!);
    const row = (workers: number) =>
      `| \`--workers ${workers}\` | ${Math.round(median(rates.get(workers)!))} | ${median(serverCost.get(workers)!).toFixed(1)} | ` +
      `${median(clientCost.get(workers)!).toFixed(1)} | ${rates.get(workers)!.map(Math.round).join(', ')} |`;
    const report = `
## Several processes

${provenance(info)} SQLite, 10 users, Basic auth,
\`GET ${PATH}\`; wrk (1 thread, ${CONNECTIONS} connections, ${SECONDS} s, median of ${ROUNDS} rounds) on the same 2 cores.
CPU per request: user + system time of all cmi processes, and of wrk, over the requests answered.

| \`cmi serve\` | requests/s | cmi CPU µs/request | wrk CPU µs/request | rounds |
|---|---|---|---|---|
${row(1)}
${row(2)}

- \`--workers 2\` / \`--workers 1\`: **${median(ratios).toFixed(2)}x**, the median of the rounds' ratios
  (${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}) (goal: at least 1.5x)
- The ceiling here: one worker has a core to itself, but two share both cores with wrk, so two can
  answer at most 2 / (cmi + wrk CPU per request) requests a second, ${((2 * server) / (server + client)).toFixed(2)}x one worker's
  1 / (cmi CPU per request). The cheaper a request is for cmi, the lower that ceiling.
`;
    return report;
  } finally {
    await database.drop();
  }
}
