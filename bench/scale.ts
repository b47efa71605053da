/**
 * Issue 4's size figure: what `X-Total` and a page cost with 1,000 and with 1,000,000 users, at the
 * first, middle and last page, measured by the server's own X-Runtime. "first visit" asks ten
 * different pages around that position once each (nothing cached); "repeat" asks one of them again
 * (the rendered page is reused while the data stands).
 * Run: npm run bench:scale                  (SQLite)
 *      BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:scale   (also PostgreSQL)
 * Writes into docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { systemClock } from '../src/domain/clock.js';
import { hashPassword } from '../src/domain/passwords.js';
import { migrateToLatest, openDatabase } from '../src/store/database.js';
import { type NewUser, usersRepository } from '../src/store/users-repository.js';
import { machine, recordSection, startCmi, stop } from './support.js';

const PORT = 3304;
const PER_PAGE = 25;
const SIZES = [1_000, 1_000_000];
const BATCH = 1_000;

async function seed(url: string, count: number): Promise<void> {
  const database = openDatabase(url);
  await migrateToLatest(database);
  const users = usersRepository(database.db);
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
  for (let start = 0; start < count; start += BATCH) {
    await users.createMany(Array.from({ length: Math.min(BATCH, count - start) }, (_, k) => row(start + k)), systemClock());
  }
  await database.close();
}

async function runtimeOf(page: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${PORT}/users.json?page=${page}&per_page=${PER_PAGE}`, {
    headers: { authorization: `Basic ${Buffer.from('admin:bench-password').toString('base64')}` },
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`page ${page}: ${res.status}`);
  return Number(res.headers.get('x-runtime')) * 1000;
}

async function measure(url: string, size: number): Promise<string[]> {
  const server = await startCmi({ DATABASE_URL: url, PORT: String(PORT), CMI_AUTH_CACHE_TTL: '300' });
  try {
    const last = Math.ceil(size / PER_PAGE);
    await runtimeOf(last + 1); // warms the process up on a page (past the end) that is measured nowhere
    const rows: string[] = [];
    for (const [name, around] of [['first', 1], ['middle', Math.floor(last / 2)], ['last', last]] as const) {
      // Ten distinct pages from the position inwards (none asked before).
      const pages = Array.from({ length: 10 }, (_, k) => (around === 1 ? around + k : around - k));
      const first: number[] = [];
      for (const page of new Set(pages)) first.push(await runtimeOf(page));
      const repeat: number[] = [];
      for (let k = 0; k < 10; k++) repeat.push(await runtimeOf(pages[0] as number));
      const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
      rows.push(`| ${size.toLocaleString('en')} | ${name} (page ${around}) | ${mean(first).toFixed(2)} | ${mean(repeat).toFixed(2)} |`);
    }
    return rows;
  } finally {
    await stop(server);
  }
}

async function sqliteRows(): Promise<string[]> {
  const rows: string[] = [];
  for (const size of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), 'cmi-scale-'));
    try {
      const url = `sqlite:${join(dir, 'cmi.sqlite3')}`;
      await seed(url, size);
      rows.push(...(await measure(url, size)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

async function postgresRows(base: string): Promise<string[]> {
  const rows: string[] = [];
  for (const size of SIZES) {
    const schema = `cmi_scale_${size}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    try {
      const url = `${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      await seed(url, size);
      rows.push(...(await measure(url, size)));
    } finally {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  }
  return rows;
}

const header = '| users | position | first visit, ms | repeat, ms |\n|---|---|---|---|';
let report = `
## Size: 1,000 against 1,000,000 users (issue 4)

\`npm run bench:scale\` on ${new Date().toISOString().slice(0, 10)}; ${machine()}. \`GET /users.json?page=N&per_page=${PER_PAGE}\` as
an administrator; the server's X-Runtime, mean of 10 requests. First visit: 10 different pages around the position, each
asked once (count and page read from the database). Repeat: one of them again (the rendered page reused).

SQLite:

${header}
${(await sqliteRows()).join('\n')}
`;
const postgresUrl = process.env.BENCH_POSTGRES_URL;
if (postgresUrl) report += `\nPostgreSQL:\n\n${header}\n${(await postgresRows(postgresUrl)).join('\n')}\n`;
console.log(report);
recordSection('scale', report);
