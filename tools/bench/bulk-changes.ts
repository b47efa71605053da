/**
 * Bulk changes by filter over a third of the errors (docs/benchmarks.md#bulk-changes-by-filter): how
 * long each takes on 1,000,000 errors, and whether every count the list shows is exact after it.
 *
 *   node --import tsx tools/bench/bulk-changes.ts [--errors 1000000] [--postgres URL] [--databases sqlite,postgres]
 *
 * The data is made by SQL statements of 50,000 errors each (every trigger of the schema running, as
 * for any writer): error i has class `Bench::E<i mod 20>`, host `hv-<i mod 50>`, component
 * `compute`, `storage` or `network` (i mod 3, a third each), one occurrence and one hourly count.
 * Then, each on its own third, in one statement or one store call each:
 * - report: `update infrastructure_errors set reported = 1` where component = compute (one
 *   statement, as a hand-written one would be);
 * - triage: triageRepository.changeMany, status resolved, where component = storage;
 * - delete: trackerRepository.deleteMatching, component = network.
 * After the three, error_counts is compared with counts over the rows themselves. SQLite in a temp
 * directory; PostgreSQL in a schema of its own; both dropped after. Each step's wall time, and the
 * CPU it took (this process's, plus on PostgreSQL its server processes' for this benchmark's
 * connections, read from /proc): on a shared machine the wall time follows the others' load, the CPU
 * much less.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { type DatabaseKind, DATABASE_NAMES, freshDatabase, withDatabase } from './datasets.js';
import type { Database } from '../../src/db/database.js';
import { filtered } from '../../src/tracker/tracker-sql.js';
import { trackerRepository } from '../../src/tracker/tracker.store.js';
import { triageRepository } from '../../src/tracker/triage.store.js';
import { errorCountsAgainstRows } from '../shared/error-counts.js';

const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : argv[at + 1];
};
const ERRORS = Number(option('--errors') ?? 1_000_000);
const POSTGRES = option('--postgres') ?? (process.env.BENCH_POSTGRES_URL || undefined);
const PER_STATEMENT = 50_000;
const AT = '2026-11-20T10:00:00.000Z';
const HOUR = Math.floor(Date.parse(AT) / 3_600_000);

/** Errors `from` .. `to` (ids, 1-based, as the table hands them out on a fresh database) and their detail rows. */
export async function seed(database: Database, from: number, to: number): Promise<void> {
  const { db } = database;
  await db.transaction().execute(async (trx) => {
    await sql`
      with recursive n(i) as (select cast(${from} as integer) union all select i + 1 from n where i < cast(${to} as integer))
      insert into infrastructure_errors (fingerprint, error_class, message, backtrace, counter, reported, created_at, updated_at)
      select 'bench-' || cast(i as varchar(20)), 'Bench::E' || cast(i % 20 as varchar(20)), 'bench error ' || cast(i as varchar(20)) || ' on volume ' || cast(i % 100003 * 7919 % 100003 as varchar(20)), '', 1, 0, ${AT}, ${AT} from n`.execute(trx);
    const ids = sql`select id from infrastructure_errors where id between cast(${from} as integer) and cast(${to} as integer)`;
    await sql`insert into error_breakdown (error_id, dimension, value, count, last_seen_at)
      select id, 'host', 'hv-' || cast(id % 50 as varchar(20)), 1, ${AT} from (${ids}) as e
      union all
      select id, 'component', case id % 3 when 0 then 'compute' when 1 then 'storage' else 'network' end, 1, ${AT} from (${ids}) as e`.execute(trx);
    await sql`insert into error_histogram (error_id, hour, count) select id, cast(${HOUR} as integer), 1 from (${ids}) as e`.execute(trx);
    await sql`insert into error_occurrences (error_id, ordinal, occurred_at, count, host, component, request_id, message, context)
      select id, 1, ${AT}, 1, 'hv-' || cast(id % 50 as varchar(20)), null, null, 'bench error', null from (${ids}) as e`.execute(trx);
  });
}

/** error_counts rows that differ from counts over the rows themselves (none when exact). */
async function countErrors(database: Database): Promise<string[]> {
  const { stored, counted } = await errorCountsAgainstRows(database.db);
  const a = new Set(stored);
  const b = new Set(counted);
  return [...[...a].filter((x) => !b.has(x)).map((x) => `stored ${x}`), ...[...b].filter((x) => !a.has(x)).map((x) => `counted ${x}`)];
}

/** The application_name of this benchmark's PostgreSQL connections, to find their server processes. */
const APPLICATION = 'cmi_bulk_bench';
const TICKS_PER_SECOND = 100;

/** CPU seconds of this process and, on PostgreSQL, of the server processes of its connections, by pid. */
async function cpuNow(database: Database, kind: DatabaseKind): Promise<Map<number, number>> {
  const usage = process.cpuUsage();
  const cpu = new Map<number, number>([[process.pid, (usage.user + usage.system) / 1e6]]);
  if (kind !== 'postgres') return cpu;
  const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity where application_name = ${APPLICATION}`.execute(database.db);
  for (const { pid } of rows) {
    try {
      // utime and stime: fields 14 and 15 of /proc/<pid>/stat, after the command in parentheses.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
    } catch {
      // Gone meanwhile.
    }
  }
  return cpu;
}

async function timed<T>(database: Database, kind: DatabaseKind, work: () => Promise<T>): Promise<{ seconds: number; cpu: number; value: T }> {
  const before = await cpuNow(database, kind);
  const started = performance.now();
  const value = await work();
  const seconds = (performance.now() - started) / 1000;
  let cpu = 0;
  for (const [pid, now] of await cpuNow(database, kind)) cpu += now - (before.get(pid) ?? 0);
  return { seconds, cpu, value };
}

async function run(kind: DatabaseKind): Promise<string[]> {
  const fresh = await freshDatabase(kind, POSTGRES);
  try {
    return await withDatabase(kind === 'postgres' ? `${fresh.url}&application_name=${APPLICATION}` : fresh.url, async (database) => {
      const lines: string[] = [];
      const load = await timed(database, kind, async () => {
        for (let from = 1; from <= ERRORS; from += PER_STATEMENT) await seed(database, from, Math.min(ERRORS, from + PER_STATEMENT - 1));
        await database.dialect.statistics.refresh(database.db);
      });
      lines.push(`| ${DATABASE_NAMES[kind]} | load ${ERRORS.toLocaleString('en')} errors | ${ERRORS.toLocaleString('en')} | ${load.seconds.toFixed(1)} | ${load.cpu.toFixed(1)} |`);
      const errors = trackerRepository(database);
      const triage = triageRepository(database);
      const report = await timed(database, kind, async () => {
        const result = await database.db.transaction().execute((trx) => trx.updateTable('infrastructure_errors').set({ reported: 1 })
          .where((eb) => eb.and([filtered(eb, { component: 'compute' }, database.dialect), eb('reported', '=', 0)])).executeTakeFirst());
        return Number(result.numUpdatedRows);
      });
      lines.push(`| ${DATABASE_NAMES[kind]} | report: \`reported = 1\`, component=compute | ${report.value.toLocaleString('en')} | ${report.seconds.toFixed(1)} | ${report.cpu.toFixed(1)} |`);
      const resolve = await timed(database, kind, () => triage.changeMany({ filters: { component: 'storage' } }, { status: 'resolved' }, null, new Date(AT)));
      lines.push(`| ${DATABASE_NAMES[kind]} | triage: status resolved, component=storage | ${resolve.value.toLocaleString('en')} | ${resolve.seconds.toFixed(1)} | ${resolve.cpu.toFixed(1)} |`);
      const removed = await timed(database, kind, () => errors.deleteMatching({ component: 'network' }));
      lines.push(`| ${DATABASE_NAMES[kind]} | delete: component=network | ${removed.value.toLocaleString('en')} | ${removed.seconds.toFixed(1)} | ${removed.cpu.toFixed(1)} |`);
      const wrong = await countErrors(database);
      lines.push(`| ${DATABASE_NAMES[kind]} | error_counts against COUNT(*) | ${wrong.length === 0 ? 'exact' : `**${wrong.length} wrong**: ${wrong.slice(0, 4).join(', ')}`} | | |`);
      return lines;
    });
  } finally {
    await fresh.drop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kinds = (option('--databases')?.split(',') ?? (POSTGRES ? ['sqlite', 'postgres'] : ['sqlite'])) as DatabaseKind[];
  console.log('| database | change | errors | seconds | CPU seconds |\n|---|---|---|---|---|');
  for (const kind of kinds) {
    for (const line of await run(kind)) console.log(line);
  }
}
