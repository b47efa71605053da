/**
 * The size figure of docs/benchmarks.md: what `X-Total` and a page cost as one database grows from 1,000 to 1,000,000
 * users, measured by the server's own X-Runtime. The database is grown in place (1k, measure, 10k,
 * measure, ...) with one server running throughout, warmed up before each size. "count only" asks
 * ten different pages past the last (answered from X-Total's sum alone); "first visit" asks ten
 * different pages around a position once each (nothing cached); "repeat" asks one of them again
 * (the rendered page is reused while the data stands).
 * Run: npm run bench:scale                  (SQLite)
 *      BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:scale   (also PostgreSQL)
 *      BENCH_SCALE_MAX=10000 npm run bench:scale   (a quick check: only the sizes up to 10,000)
 * Writes into docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { systemClock } from '../src/domain/clock.js';
import { hashPassword } from '../src/domain/passwords.js';
import { loadConfig } from '../src/config.js';
import { migrateToLatest, openDatabase } from '../src/store/database.js';
import { type NewUser, usersRepository } from '../src/store/users-repository.js';
import { type RunningServer, startServer } from '../test/support/cli.js';
import { buildDist, machine, median, recordSection } from './support.js';

const PORT = 3304;
const PER_PAGE = 25;
const LARGEST = Number(process.env.BENCH_SCALE_MAX ?? 1_000_000);
const SIZES = [1_000, 10_000, 100_000, 1_000_000].filter((size) => size <= LARGEST);
const BATCH = 1_000;
/** Requests before each size's measured ones: enough for V8 to compile the list path on every size. */
const WARM_UP_REQUESTS = 200;
const header = '| users | position | first visit, ms | repeat, ms |\n|---|---|---|---|';

/** Adds users `from` .. `to - 1` (user 0 is the administrator the requests sign in as). */
async function grow(url: string, from: number, to: number): Promise<void> {
  const database = openDatabase(loadConfig({ DATABASE_URL: url }));
  await migrateToLatest(database);
  const users = usersRepository(database);
  const hash = await hashPassword('bench-password');
  const row = (i: number): NewUser => ({
    login: i === 0 ? 'admin' : `user${i}`,
    email: i === 0 ? 'admin@bench.test' : `user${i}@bench.test`,
    password_hash: hash,
    first_name: 'Bench',
    last_name: 'User',
    role: i === 0 ? 'admin' : 'user',
    time_zone: null,
    locale: null,
  });
  for (let start = from; start < to; start += BATCH) {
    await users.createMany(Array.from({ length: Math.min(BATCH, to - start) }, (_, k) => row(start + k)), systemClock());
  }
  // What autovacuum does soon after a bulk load (each batch left dead versions of the block rows it
  // counted into); done here so the measurement does not race it or read through them.
  await database.dialect.refreshStatistics(database.db);
  await database.close();
}

async function runtimeOf(page: number, perPage = PER_PAGE): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${PORT}/users.json?page=${page}&per_page=${perPage}`, {
    headers: { authorization: `Basic ${Buffer.from('admin:bench-password').toString('base64')}` },
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`page ${page}: ${res.status}`);
  return Number(res.headers.get('x-runtime')) * 1000;
}

/**
 * Pages of 24 and 26 users spread over the whole list: the same work as the measured pages (count,
 * seek, render), under cache keys the measured requests (25 a page) never use.
 */
async function warmUp(size: number): Promise<void> {
  for (let k = 0; k < WARM_UP_REQUESTS; k++) {
    const perPage = k % 2 === 0 ? 24 : 26;
    await runtimeOf(1 + Math.floor((k / WARM_UP_REQUESTS) * Math.ceil(size / perPage)), perPage);
  }
}

interface Position {
  name: string;
  firstVisit: number;
  repeat: number;
}

async function measure(size: number): Promise<Position[]> {
  await warmUp(size);
  const last = Math.ceil(size / PER_PAGE);
  const positions: Position[] = [];
  const around: Array<[name: string, pages: number[]]> = [
    // Past the last page the list is empty: the answer costs X-Total's sum and nothing else.
    [`count only (pages ${last + 1}-${last + 10})`, Array.from({ length: 10 }, (_, k) => last + 1 + k)],
    // Ten distinct pages from the position inwards (none asked before).
    ['first (page 1)', Array.from({ length: 10 }, (_, k) => 1 + k)],
    [`middle (page ${Math.floor(last / 2)})`, Array.from({ length: 10 }, (_, k) => Math.floor(last / 2) - k)],
    [`last (page ${last})`, Array.from({ length: 10 }, (_, k) => last - k)],
  ];
  for (const [name, pages] of around) {
    const first: number[] = [];
    for (const page of pages) first.push(await runtimeOf(page));
    const repeat: number[] = [];
    for (let k = 0; k < 10; k++) repeat.push(await runtimeOf(pages[0] as number));
    positions.push({ name, firstVisit: median(first), repeat: median(repeat) });
  }
  return positions;
}

/** Grows the database at `url` through every size, measuring at each; one table of rows and the curve. */
async function curve(url: string): Promise<string> {
  const rows: string[] = [];
  const bySize = new Map<number, Position[]>();
  let server: RunningServer | undefined;
  let seeded = 0;
  try {
    for (const size of SIZES) {
      await grow(url, seeded, size);
      seeded = size;
      server ??= await startServer({ DATABASE_URL: url, CMI_AUTH_CACHE_TTL: '300' }, [], { port: PORT, cores: '0', stderr: 'inherit', program: 'built' });
      const positions = await measure(size);
      bySize.set(size, positions);
      for (const p of positions) rows.push(`| ${size.toLocaleString('en')} | ${p.name} | ${p.firstVisit.toFixed(2)} | ${p.repeat.toFixed(2)} |`);
    }
  } finally {
    if (server) await server.stop();
  }
  const smallest = bySize.get(SIZES[0] as number) ?? [];
  const largest = bySize.get(SIZES[SIZES.length - 1] as number) ?? [];
  const ratios = largest.map((p, i) => `${p.name.split(' ')[0]} ${(p.firstVisit / (smallest[i] as Position).firstVisit).toFixed(2)}x`);
  return `${header}\n${rows.join('\n')}\n\nFirst visit at ${(SIZES[SIZES.length - 1] as number).toLocaleString('en')} / at ${(SIZES[0] as number).toLocaleString('en')} users: ` +
    `${ratios.join(', ')} (goal: at most 2x).\n`;
}

async function sqliteCurve(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'cmi-scale-'));
  try {
    return await curve(`sqlite:${join(dir, 'cmi.sqlite3')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresCurve(base: string): Promise<string> {
  const schema = 'cmi_scale';
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  try {
    return await curve(`${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`);
  } finally {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

buildDist();
let report = `
## Size: 1,000 to 1,000,000 users

\`npm run bench:scale\` on ${new Date().toISOString().slice(0, 10)}; ${machine()}. \`GET /users.json?page=N&per_page=${PER_PAGE}\`
as an administrator; the server's X-Runtime, median of 10 requests (a stray pause moves a mean on this noisy VM). One
database grown from 1,000 users to each size in turn, one server throughout, ${WARM_UP_REQUESTS} warm-up requests (other
page sizes) before each size. First visit: 10 different pages around the position, each asked once (X-Total and the page
read from the database). Repeat: one of them again (the rendered page reused). Count only: pages past the last, which
read X-Total alone. On PostgreSQL each growth step ends with \`VACUUM ANALYZE\`, as autovacuum would soon after a bulk load.

SQLite:

${await sqliteCurve()}`;
const postgresUrl = process.env.BENCH_POSTGRES_URL;
if (postgresUrl) report += `\nPostgreSQL:\n\n${await postgresCurve(postgresUrl)}`;
console.log(report);
recordSection('scale', report);
