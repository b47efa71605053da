/**
 * Issue 4's process figure: authenticated `GET /users.json?page=4&per_page=2` (Basic auth) with
 * `cmi serve --workers 1` and `--workers 2`, on this machine's 2 cores. wrk (1 thread) shares the
 * cores with the workers, as a client on the same machine must.
 * Run: npm run bench:workers   (needs wrk: apt-get install wrk). Writes into docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machine, median, recordSection, seedUsers, startCmi, stop, wrk } from './support.js';

const PORT = 3303;
const PATH = '/users.json?page=4&per_page=2';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 32;

const dir = mkdtempSync(join(tmpdir(), 'cmi-bench-'));
const url = `sqlite:${join(dir, 'cmi.sqlite3')}`;
await seedUsers(url, 10);
const basic = { Authorization: `Basic ${Buffer.from('admin:bench-password').toString('base64')}` };
const rates = new Map<number, number[]>([[1, []], [2, []]]);
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const workers of [1, 2]) {
      const server = await startCmi({ DATABASE_URL: url, PORT: String(PORT) }, '0,1', ['--workers', String(workers)]);
      try {
        wrk(`http://127.0.0.1:${PORT}${PATH}`, basic, { seconds: 2, connections: CONNECTIONS, cores: '0,1' });
        const result = wrk(`http://127.0.0.1:${PORT}${PATH}`, basic, { seconds: SECONDS, connections: CONNECTIONS, cores: '0,1' });
        if (result.non2xx > 0) throw new Error(`${result.non2xx} answers were not 2xx`);
        rates.get(workers)?.push(result.requestsPerSecond);
      } finally {
        await stop(server);
      }
    }
  }
  const one = median(rates.get(1)!);
  const two = median(rates.get(2)!);
  const report = `
## Several processes (issue 4)

\`npm run bench:workers\` on ${new Date().toISOString().slice(0, 10)}; ${machine()}. SQLite, 10 users, Basic auth,
\`GET ${PATH}\`; wrk (1 thread, ${CONNECTIONS} connections, ${SECONDS} s, median of ${ROUNDS} rounds) on the same 2 cores.

| \`cmi serve\` | requests/s | rounds |
|---|---|---|
| \`--workers 1\` | ${Math.round(one)} | ${rates.get(1)!.map(Math.round).join(', ')} |
| \`--workers 2\` | ${Math.round(two)} | ${rates.get(2)!.map(Math.round).join(', ')} |

- \`--workers 2\` / \`--workers 1\`: **${(two / one).toFixed(2)}x** (goal: at least 1.5x)
`;
  console.log(report);
  recordSection('workers', report);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
