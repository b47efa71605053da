/**
 * The error list's first visits on a large tracker (docs/benchmarks.md#error-list-queries-first-visits):
 * 1,000,000 errors and 10,000,000 kept occurrences (`--quick`: 20,000 and 200,000), each documented
 * filter, sort and search alone and in combinations, the first page with its X-Total.
 *
 *   npm run bench -- --only queries [--postgres URL] [--quick]
 *   BENCH_KEEP=1 npm run bench -- --only queries ...          keeps the seeded databases (their URLs printed)
 *   BENCH_ERRORS=200000 npm run bench -- --only queries ...   another number of errors
 *   BENCH_SEEDED=URL,URL BENCH_QUERIES='q=word,component' ...  measures on them again, some queries only
 *
 * The data is made by set-based SQL in statements of 50,000 errors (every trigger of the schema
 * running, as for any writer, so error_counts, the text index and the triage rows are what cmi keeps):
 * see `seed` for the distributions. Every request is a page cache miss: the server runs with
 * `CMI_PAGE_CACHE_BYTES=0`, its documented setting for "no rendered answer kept" (config.ts), so each
 * request runs its statements and renders (the database's own buffers stay warm: a first visit to a
 * page, not a cold database). The figure is the server's X-Runtime; the queries take turns, round
 * after round, so the machine's load falls on all of them alike. Each query's statements are captured
 * in this process (the store's own `list`, through a kysely plugin) and their plans written beside.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, sql, type UnknownRow } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { parseErrorListQuery } from '../../src/tracker/query.js';
import { filtered } from '../../src/tracker/tracker-sql.js';
import { trackerRepository } from '../../src/tracker/tracker.store.js';
import { type RunningServer, startServer } from '../shared/server-process.js';
import { BASIC, type DatabaseKind, DATABASE_NAMES, freshDatabase, seedUsers, withDatabase } from './datasets.js';
import { provenance, type RunInfo } from './document.js';

export interface QueriesOptions {
  info: RunInfo;
  kinds: DatabaseKind[];
  postgres?: string;
  quick: boolean;
  failures: string[];
}

const BASE = '/sysadmin_tools/infrastructure/errors';
const PER_STATEMENT = 50_000;
const OCCURRENCES_PER_ERROR = 10;
const NOW_S = Date.parse('2026-11-20T10:00:00.000Z') / 1000;
const DAY_S = 86_400;
const P50_GOAL_MS = 50;
const P99_GOAL_MS = 200;
const WORDS = ['timeout', 'refused', 'deadlock', 'overflow', 'corrupt', 'unreachable', 'denied', 'exhausted', 'stale', 'mismatch'];
const COMPONENTS = ['hypervisor', 'storage', 'network', 'backup', 'scheduler', 'dns', 'dhcp', 'monitoring', 'billing', 'api'];
const CLASSES = 50;
const HOSTS = 500;
/** The error whose whole message `q=` searches for. */
const EXACT = 12_345;

/**
 * Error i (its id on a fresh database): class `Bench::E<i mod 50>` (20,000 each of 1M); message
 * `<word ⌊i/11⌋ mod 10> while talking to node <i mod 997> on volume <i·7919 mod 100003>`; counter
 * 10 + (i·48271 mod 100000); a third reported (i mod 3 = 0); created up to 90 days before
 * 2026-11-20T10:00Z, updated between then and its creation; seen on one host `hv-<⌊i·7919/13⌋ mod 500>`
 * (about 2,000 errors each; and `hv-old`, see `seed`) and one component of 10 (⌊i/3⌋ mod 10: 100,000 each); 10 kept occurrences and one
 * hourly count. Triage: a fifth resolved (i mod 5 = 1), a fortieth assigned to user 1 (i mod 40 = 3).
 */
const expressions: Record<DatabaseKind, { ids: (from: number, to: number) => string; iso: (seconds: string) => string; word: string; component: string; text: (x: string) => string; big: (x: string) => string }> = {
  sqlite: {
    ids: (from, to) => `with recursive n(i) as (select ${from} union all select i + 1 from n where i < ${to})`,
    iso: (seconds) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${seconds}, 'unixepoch')`,
    word: `json_extract('${JSON.stringify(WORDS)}', '$[' || (i / 11 % 10) || ']')`,
    component: `json_extract('${JSON.stringify(COMPONENTS)}', '$[' || (id / 3 % 10) || ']')`,
    text: (x) => `cast(${x} as text)`,
    big: (x) => x,
  },
  postgres: {
    ids: (from, to) => `with n(i) as (select generate_series(${from}::bigint, ${to}::bigint))`,
    iso: (seconds) => `to_char(to_timestamp(${seconds}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
    word: `(array[${WORDS.map((w) => `'${w}'`).join(',')}])[i / 11 % 10 + 1]`,
    component: `(array[${COMPONENTS.map((w) => `'${w}'`).join(',')}])[id / 3 % 10 + 1]`,
    text: (x) => `(${x})::text`,
    // The errors' ids are 4-byte integers there: a product of one and 7919 is not.
    big: (x) => `${x}::bigint`,
  },
};

async function seed(database: Database, kind: DatabaseKind, errors: number): Promise<void> {
  const x = expressions[kind];
  const run = (statement: string, trx = database.db) => sql.raw(statement).execute(trx);
  for (let from = 1; from <= errors; from += PER_STATEMENT) {
    const to = Math.min(errors, from + PER_STATEMENT - 1);
    await database.db.transaction().execute(async (trx) => {
      const created = `${NOW_S} - (i * 7919) % ${90 * DAY_S}`;
      const updated = `${NOW_S} - ((i * 7919) % ${90 * DAY_S}) * ((i * 31) % 100) / 100`;
      await run(`${x.ids(from, to)}
        insert into infrastructure_errors (fingerprint, error_class, message, backtrace, counter, reported, created_at, updated_at)
        select 'q-' || ${x.text('i')}, 'Bench::E' || ${x.text(`i % ${CLASSES}`)},
          ${x.word} || ' while talking to node ' || ${x.text('i % 997')} || ' on volume ' || ${x.text('i * 7919 % 100003')},
          'app/bench/error.js:1:in run', 10 + (i * 48271) % 100000, case when i % 3 = 0 then 1 else 0 end,
          ${x.iso(created)}, ${x.iso(updated)}
        from n`, trx);
      const range = `from infrastructure_errors where id between ${from} and ${to}`;
      await run(`insert into error_breakdown (error_id, dimension, value, count, last_seen_at)
        select id, 'host', 'hv-' || ${x.text(`${x.big('id')} * 7919 / 13 % ${HOSTS}`)}, counter, updated_at ${range}
        union all select id, 'component', ${x.component}, counter, updated_at ${range}`, trx);
      await run(`insert into error_histogram (error_id, hour, count) select id, ${kind === 'postgres' ? `(${NOW_S} / 3600)::integer - (id % 2000)::integer` : `${Math.floor(NOW_S / 3600)} - id % 2000`}, counter ${range}`, trx);
      const ks = Array.from({ length: OCCURRENCES_PER_ERROR }, (_, k) => `select ${k + 1} as k`).join(' union all ');
      await run(`insert into error_occurrences (error_id, ordinal, occurred_at, count, host, component, request_id, message, context)
        select id, k, created_at, 1, 'hv-' || ${x.text(`${x.big('id')} * 7919 / 13 % ${HOSTS}`)}, ${x.component}, null, message, null
        from infrastructure_errors, (${ks}) as ks where id between ${from} and ${to}`, trx);
      await run(`update error_triage set triage_status = 'resolved', resolved_at = '2026-11-19T10:00:00.000Z', updated_at = '2026-11-19T10:00:00.000Z'
        where error_id between ${from} and ${to} and error_id % 5 = 1`, trx);
      await run(`update error_triage set assignee_id = 1 where error_id between ${from} and ${to} and error_id % 40 = 3`, trx);
    });
    if (from % 200_000 === 1) console.log(`  ${DATABASE_NAMES[kind]}: ${to.toLocaleString('en')} errors`);
  }
  // One host more, `hv-old`, on every error last updated over 60 days ago (about 63,000 of 1M), all
  // older than the other 940,000: a host whose errors an incident on the others has pushed far down
  // the list's order, which a walk of that order passes before finding any of them.
  await run(`insert into error_breakdown (error_id, dimension, value, count, last_seen_at)
    select id, 'host', 'hv-old', 1, updated_at from infrastructure_errors where updated_at < '${new Date((NOW_S - 60 * DAY_S) * 1000).toISOString()}'`);
  await database.dialect.statistics.refresh(database.db);
}

/** The list's queries measured: what a user asks, alone and combined. */
function queriesOf(): Array<[string, string]> {
  const day = (days: number) => encodeURIComponent(new Date((NOW_S - days * DAY_S) * 1000).toISOString());
  return [
    ['unfiltered (updated_at desc)', ''],
    ['sort=created_at', 'sort=created_at'],
    ['sort=counter', 'sort=counter'],
    ['direction=asc', 'direction=asc'],
    ['reported=false', 'reported=false'],
    ['reported=true&sort=counter', 'reported=true&sort=counter'],
    ['error_class', 'error_class=Bench%3A%3AE7'],
    ['error_class&sort=counter', 'error_class=Bench%3A%3AE7&sort=counter'],
    ['error_class&reported=false', 'error_class=Bench%3A%3AE7&reported=false'],
    ['host', 'host=hv-17'],
    ['host&sort=counter', 'host=hv-17&sort=counter'],
    ['host of old errors only', 'host=hv-old'],
    ['component', 'component=storage'],
    ['component&reported=false', 'component=storage&reported=false'],
    ['component&sort=counter', 'component=storage&sort=counter'],
    ['host&component&sort=counter', 'host=hv-17&component=storage&sort=counter'],
    ['host&reported=false&sort=created_at', 'host=hv-17&reported=false&sort=created_at'],
    ['since=1 day ago', `since=${day(1)}`],
    ['since&until (a day, 30 days ago)', `since=${day(31)}&until=${day(30)}`],
    ['since=7 days&error_class', `since=${day(7)}&error_class=Bench%3A%3AE7`],
    ['since=7 days&component', `since=${day(7)}&component=storage`],
    ['q=word', 'q=deadlock'],
    ['q=exact message', `q=${encodeURIComponent(`${WORDS[Math.floor(EXACT / 11) % 10]} while talking to node ${EXACT % 997} on volume ${(EXACT * 7919) % 100003}`)}`],
    ['q=rare (no match)', 'q=zzqx'],
    ['q=word&reported=false', 'q=deadlock&reported=false'],
    ['q=word&component', 'q=deadlock&component=storage'],
    ['q=word&sort=counter', 'q=deadlock&sort=counter'],
    ['status=resolved', 'status=resolved'],
    ['status=unresolved&sort=counter', 'status=unresolved&sort=counter'],
    ['assignee=1', 'assignee=1'],
    ['assignee=none&status=unresolved', 'assignee=none&status=unresolved'],
    ['status=resolved&component', 'status=resolved&component=storage'],
    ['status=unresolved&reported=false&error_class', 'status=unresolved&reported=false&error_class=Bench%3A%3AE7'],
    ['page 40 (offset 975)', 'page=40'],
  ];
}

/** Records the SQL and parameters of each statement run through the handle it is given to. */
class Capture implements KyselyPlugin {
  statements: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  constructor(private readonly compile: (node: RootOperationNode, queryId: PluginTransformQueryArgs['queryId']) => { sql: string; parameters: readonly unknown[] }) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.statements.push(this.compile(args.node, args.queryId));
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}

/** The plans of the statements the store's list runs for `query`, and the exact count by walking every error. */
async function plansOf(database: Database, kind: DatabaseKind, query: string): Promise<{ plans: string; exact: number }> {
  const capture = new Capture((node, queryId) => database.db.getExecutor().compileQuery(node, queryId));
  const captured = { ...database, db: database.db.withPlugin(capture) } as Database;
  const params = Object.fromEntries(new URLSearchParams(query));
  const { filters, sort, direction } = parseErrorListQuery(params);
  const page = Number(params['page'] ?? 1);
  const repository = trackerRepository(captured);
  capture.statements = [];
  await repository.list(filters, sort, direction, 25, (page - 1) * 25);
  const blocks: string[] = [];
  for (const statement of capture.statements) {
    const inline = statement.sql;
    let plan: string;
    // A plan the store asks for itself (the rarest word of a search, PostgreSQL) has no plan of its own.
    if (/^explain\b/i.test(inline.trim())) plan = '(a plan, made and not run)';
    else if (kind === 'sqlite') {
      const { rows } = await database.db.executeQuery<{ id: number; parent: number; detail: string }>({ sql: `explain query plan ${inline}`, parameters: statement.parameters, query: undefined as never, queryId: undefined as never });
      const depth = new Map<number, number>([[0, 0]]);
      plan = rows.map((row) => {
        const d = (depth.get(row.parent) ?? 0) + 1;
        depth.set(row.id, d);
        return `${'  '.repeat(d - 1)}${row.detail}`;
      }).join('\n');
    } else {
      const { rows } = await database.db.executeQuery<{ 'QUERY PLAN': string }>({ sql: `explain (analyze, costs off, timing off) ${inline}`, parameters: statement.parameters, query: undefined as never, queryId: undefined as never });
      plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    }
    const shown = statement.parameters.length > 0 ? `-- parameters: ${JSON.stringify(statement.parameters).slice(0, 300)}\n` : '';
    blocks.push(`${shown}${inline}\n${plan}`);
  }
  // The exact count, the slow way: every error tested against the filters, with no count table.
  const row = await database.db.selectFrom('infrastructure_errors').select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where((eb) => filtered(eb, filters, database.dialect, false)).executeTakeFirstOrThrow();
  return { plans: blocks.join('\n\n'), exact: Number(row.n) };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)] as number;
};

/**
 * BENCH_SEEDED: the URLs (comma-separated) of databases a run with BENCH_KEEP=1 seeded, used again
 * (migrated, not seeded, not dropped) to measure a change of the list without seeding anew.
 */
function seeded(kind: DatabaseKind): string | undefined {
  return (process.env['BENCH_SEEDED'] ?? '').split(',').find((url) => url !== '' && url.startsWith('sqlite:') === (kind === 'sqlite'));
}

async function measure(kind: DatabaseKind, options: QueriesOptions, errors: number, rounds: number): Promise<string> {
  const reused = seeded(kind);
  const fresh = reused ? { url: reused, drop: () => Promise.resolve() } : await freshDatabase(kind, options.postgres);
  const spool = mkdtempSync(join(tmpdir(), 'cmi-bench-spool-'));
  let server: RunningServer | undefined;
  try {
    const started = performance.now();
    if (!reused) {
      await seedUsers(fresh.url, 1);
      await withDatabase(fresh.url, (database) => seed(database, kind, errors));
    } else await withDatabase(fresh.url, (database) => database.dialect.statistics.refresh(database.db));
    const seedSeconds = (performance.now() - started) / 1000;
    console.log(`${DATABASE_NAMES[kind]}: ${errors.toLocaleString('en')} errors seeded in ${seedSeconds.toFixed(0)} s`);
    server = await startServer({ DATABASE_URL: fresh.url, CMI_SPOOL_DIR: spool, CMI_PAGE_CACHE_BYTES: '0' }, [], { program: 'built' });
    // BENCH_QUERIES: only the queries whose names are given (comma-separated), to measure a change quickly.
    const only = process.env['BENCH_QUERIES']?.split(',');
    const queries = queriesOf().filter(([name]) => !only || only.includes(name));
    const ask = async (query: string) => {
      const res = await fetch(`${(server as RunningServer).baseUrl}${BASE}.json${query ? `?${query}` : ''}`, { headers: { authorization: BASIC } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${query}: ${res.status}`);
      return { ms: Number(res.headers.get('x-runtime')) * 1000, total: Number(res.headers.get('x-total')) };
    };
    // Two rounds unmeasured: V8 compiles each path, the database reads its pages into its buffers.
    for (let k = 0; k < 2; k++) for (const [, query] of queries) await ask(query);
    const times = queries.map(() => [] as number[]);
    const totals = queries.map(() => -1);
    for (let round = 0; round < rounds; round++) {
      for (const [k, [, query]] of queries.entries()) {
        const answer = await ask(query);
        (times[k] as number[]).push(answer.ms);
        totals[k] = answer.total;
      }
    }
    const rows: string[] = [];
    const plans: string[] = [];
    let reached = 0;
    await withDatabase(fresh.url, async (database) => {
      for (const [k, [name, query]] of queries.entries()) {
        const p50 = percentile(times[k] as number[], 0.5);
        const p99 = percentile(times[k] as number[], 0.99);
        const { plans: plan, exact } = await plansOf(database, kind, query);
        const total = totals[k] as number;
        if (total !== exact) options.failures.push(`${DATABASE_NAMES[kind]} ${name}: X-Total ${total}, ${exact} match`);
        const ok = p50 <= P50_GOAL_MS && p99 <= P99_GOAL_MS;
        if (ok) reached++;
        rows.push(`| ${name} | ${total.toLocaleString('en')}${total === exact ? '' : ` **(${exact.toLocaleString('en')} match)**`} | ${p50.toFixed(1)} | ${p99.toFixed(1)} | ${ok ? 'yes' : '**no**'} |`);
        plans.push(`\`${name}\`: \`?${decodeURIComponent(query)}\`\n\n\`\`\`\n${plan}\n\`\`\``);
      }
    });
    return [
      `${DATABASE_NAMES[kind]}: ${errors.toLocaleString('en')} errors and ${(errors * OCCURRENCES_PER_ERROR).toLocaleString('en')} occurrences seeded in ${seedSeconds.toFixed(0)} s; ` +
        `${rounds} rounds of every query; goal (p50 ≤ ${P50_GOAL_MS} ms and p99 ≤ ${P99_GOAL_MS} ms) reached by ${reached} of ${queries.length}.`,
      '',
      '| first page (25), `GET /sysadmin_tools/infrastructure/errors.json?...` | X-Total | p50 ms | p99 ms | goal |',
      '|---|---|---|---|---|',
      ...rows,
      '',
      `<details><summary>${DATABASE_NAMES[kind]}: the statements of each query and their plans (${kind === 'sqlite' ? '`EXPLAIN QUERY PLAN`' : '`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)`'})</summary>`,
      '',
      ...plans.flatMap((plan) => [plan, '']),
      '</details>',
    ].join('\n');
  } finally {
    if (server) await server.stop();
    rmSync(spool, { recursive: true, force: true });
    // BENCH_KEEP=1 keeps the database for a look at it by hand (its URL printed), to drop by hand.
    if (process.env['BENCH_KEEP'] === '1' || reused) console.log(`kept: ${fresh.url}`);
    else await fresh.drop();
  }
}

export async function queriesSection(options: QueriesOptions): Promise<string> {
  // BENCH_ERRORS: another number of errors (a size between --quick and the full one, to iterate on).
  const errors = Number(process.env['BENCH_ERRORS'] ?? (options.quick ? 20_000 : 1_000_000));
  // BENCH_ROUNDS: fewer rounds on a machine too loaded for 100 (p99 of fewer than 100 is their largest).
  const rounds = Number(process.env['BENCH_ROUNDS'] ?? (options.quick ? 10 : 100));
  const parts: string[] = [];
  for (const kind of options.kinds) {
    const text = await measure(kind, options, errors, rounds);
    console.log(text.split('\n<details>')[0]);
    parts.push(text);
  }
  return `
## Error list queries, first visits

${provenance(options.info)} Load before the run: \`${(await import('node:os')).loadavg().map((n) => n.toFixed(2)).join(' ')}\`.

tools/bench/queries.ts makes ${errors.toLocaleString('en')} errors and ${(errors * OCCURRENCES_PER_ERROR).toLocaleString('en')} kept occurrences with set-based SQL (every trigger running,
so error_counts, the text index and the triage rows are as cmi keeps them): 50 classes, 500 hosts and 10 components evenly,
10 message words, a third reported, a fifth resolved, a fortieth assigned, updated over 90 days. The server (\`npm start\`'s
dist/) runs with \`CMI_PAGE_CACHE_BYTES=0\`, its setting for keeping no rendered answer: every request is a page cache
miss that runs its statements and renders (the database's buffers are warm, as on a server in use). Each query's first
page of 25 with X-Total, the server's X-Runtime, the queries taking turns for ${rounds} rounds after 2 unmeasured ones;
goal p50 ≤ ${P50_GOAL_MS} ms and p99 ≤ ${P99_GOAL_MS} ms. X-Total is checked against a count of every error tested by the filters.

${parts.join('\n\n')}
`;
}
