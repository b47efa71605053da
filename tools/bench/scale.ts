/**
 * The size figures of docs/benchmarks.md#scale: what `X-Total` and a page cost as one database grows
 * from 1,000 to 1,000,000 users, measured by the server's own X-Runtime, and the page-depth and
 * table-size curves drawn from them (docs/bench-page-depth.svg, docs/bench-table-size.svg). The
 * database is grown in place (1k, measure, 10k, measure, ...) with one server running throughout,
 * warmed up before each size. "count only" asks ten different pages past the last (answered from
 * X-Total's sum alone); "first visit" asks ten different pages around a position once each (nothing
 * cached); "repeat" asks one of them again (the rendered page is reused while the data stands).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lineChart, type Series } from './line-chart.js';
import { type RunningServer, startServer } from '../shared/server-process.js';
import { BASIC, DATABASE_NAMES, type DatabaseKind, type SharedDatabases } from './datasets.js';
import { provenance, type RunInfo } from './document.js';
import { median } from './support.js';

const PORT = 3304;
const PER_PAGE = 25;
/** Requests before each size's measured ones: enough for V8 to compile the list path on every size. */
const WARM_UP_REQUESTS = 200;
const header = '| users | position | first visit, ms | repeat, ms |\n|---|---|---|---|';

export interface ScaleOptions {
  info: RunInfo;
  data: SharedDatabases;
  kinds: DatabaseKind[];
  /** Sizes in users, smallest first: 1,000, 10,000, 100,000, 1,000,000. */
  sizes: number[];
  /** Where the two charts are written: the directory of the document that shows them. */
  chartDir: string;
}

async function runtimeOf(page: number, perPage = PER_PAGE): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${PORT}/users.json?page=${page}&per_page=${perPage}`, { headers: { authorization: BASIC } });
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
  key: 'count' | 'first' | 'middle' | 'last';
  name: string;
  page: number;
  firstVisit: number;
  repeat: number;
}

async function measure(size: number): Promise<Position[]> {
  await warmUp(size);
  const last = Math.ceil(size / PER_PAGE);
  const middle = Math.floor(last / 2);
  const positions: Position[] = [];
  const around: Array<[key: Position['key'], name: string, pages: number[]]> = [
    // Past the last page the list is empty: the answer costs X-Total's sum and nothing else.
    ['count', `count only (pages ${last + 1}-${last + 10})`, Array.from({ length: 10 }, (_, k) => last + 1 + k)],
    // Ten distinct pages from the position inwards (none asked before).
    ['first', 'first (page 1)', Array.from({ length: 10 }, (_, k) => 1 + k)],
    ['middle', `middle (page ${middle})`, Array.from({ length: 10 }, (_, k) => middle - k)],
    ['last', `last (page ${last})`, Array.from({ length: 10 }, (_, k) => last - k)],
  ];
  for (const [key, name, pages] of around) {
    const first: number[] = [];
    for (const page of pages) first.push(await runtimeOf(page));
    const repeat: number[] = [];
    for (let k = 0; k < 10; k++) repeat.push(await runtimeOf(pages[0] as number));
    positions.push({ key, name, page: pages[0] as number, firstVisit: median(first), repeat: median(repeat) });
  }
  return positions;
}

/** Grows the kind's shared database through every size, measuring at each. */
async function curve(kind: DatabaseKind, options: ScaleOptions): Promise<Map<number, Position[]>> {
  const bySize = new Map<number, Position[]>();
  let server: RunningServer | undefined;
  try {
    for (const [k, size] of options.sizes.entries()) {
      // The first size exactly: a database of more users (another section's) is not grown from.
      const { url } = await options.data.get(kind, { users: size, exact: k === 0 });
      server ??= await startServer({ DATABASE_URL: url, CMI_AUTH_CACHE_TTL: '300' }, [], { port: PORT, cores: '0', stderr: 'inherit', program: 'built' });
      bySize.set(size, await measure(size));
    }
  } finally {
    if (server) await server.stop();
  }
  return bySize;
}

function table(bySize: Map<number, Position[]>): string {
  const rows = [...bySize].flatMap(([size, positions]) =>
    positions.map((p) => `| ${size.toLocaleString('en')} | ${p.name} | ${p.firstVisit.toFixed(2)} | ${p.repeat.toFixed(2)} |`));
  const sizes = [...bySize.keys()];
  const smallest = bySize.get(sizes[0] as number) ?? [];
  const largest = bySize.get(sizes.at(-1) as number) ?? [];
  const growth = largest.map((p, i) => `${p.key} ${(p.firstVisit / (smallest[i] as Position).firstVisit).toFixed(2)}x`);
  const depth = (pick: (p: Position) => number) => {
    const of = (key: Position['key']) => pick(largest.find((p) => p.key === key) as Position);
    return (of('last') / of('first'));
  };
  const verdict = (ratio: number) => `${ratio.toFixed(2)}x ${ratio <= 2 ? 'reached' : '**missed**'}`;
  return `${header}\n${rows.join('\n')}\n\n` +
    `- Table size: first visit at ${(sizes.at(-1) as number).toLocaleString('en')} / at ${(sizes[0] as number).toLocaleString('en')} users: ${growth.join(', ')} (goal: at most 2x).\n` +
    `- Page depth at ${(sizes.at(-1) as number).toLocaleString('en')} users, last page / page 1 (goal: at most 2x): first visit ${verdict(depth((p) => p.firstVisit))}, repeat ${verdict(depth((p) => p.repeat))}.\n`;
}

/**
 * The page-depth chart (the largest size) and the table-size chart, written into `chartDir`: line
 * charts of the console's SVG renderer (src/console/svg-charts.ts), each a file ending in a newline.
 */
function charts(curves: Map<DatabaseKind, Map<number, Position[]>>, chartDir: string): void {
  const depth: Series[] = [];
  const size: Series[] = [];
  for (const [kind, bySize] of curves) {
    const sizes = [...bySize.keys()];
    const largest = (bySize.get(sizes.at(-1) as number) ?? []).filter((p) => p.key !== 'count');
    depth.push({ name: `${DATABASE_NAMES[kind]}, first visit`, points: largest.map((p) => [p.page, p.firstVisit]) });
    depth.push({ name: `${DATABASE_NAMES[kind]}, repeat`, points: largest.map((p) => [p.page, p.repeat]) });
    for (const key of ['first', 'last'] as const) {
      size.push({ name: `${DATABASE_NAMES[kind]}, ${key} page`, points: sizes.map((n) => [n, (bySize.get(n)?.find((p) => p.key === key) as Position).firstVisit]) });
    }
  }
  const largestSize = Math.max(...[...curves.values()].flatMap((bySize) => [...bySize.keys()]));
  writeFileSync(join(chartDir, 'bench-page-depth.svg'), `${lineChart({
    title: `Page depth: ${largestSize.toLocaleString('en')} users, 25 a page`,
    xLabel: 'page', yLabel: 'X-Runtime, ms (median)', xScale: 'linear', series: depth,
  }).text}\n`);
  writeFileSync(join(chartDir, 'bench-table-size.svg'), `${lineChart({
    title: 'Table size: first visit of a page',
    xLabel: 'users', yLabel: 'X-Runtime, ms (median)', xScale: 'log', series: size,
  }).text}\n`);
}

export async function scaleSection(options: ScaleOptions): Promise<string> {
  const curves = new Map<DatabaseKind, Map<number, Position[]>>();
  for (const kind of options.kinds) curves.set(kind, await curve(kind, options));
  charts(curves, options.chartDir);
  const largest = (options.sizes.at(-1) as number).toLocaleString('en');
  return `
## Size: ${options.sizes.map((n) => n.toLocaleString('en')).join(', ')} users

${provenance(options.info)}

\`GET /users.json?page=N&per_page=${PER_PAGE}\` as an administrator; the server's X-Runtime, median of 10 requests (a
stray pause moves a mean on this noisy VM). One database grown from ${options.sizes[0]?.toLocaleString('en')} users to each size in turn
(usersRepository.createMany, 1,000 a statement), one server throughout (bin/cmi.js, dist/, pinned to core 0),
${WARM_UP_REQUESTS} warm-up requests (other page sizes) before each size. First visit: 10 different pages around the
position, each asked once (X-Total and the page read from the database). Repeat: one of them again (the rendered
page reused). Count only: pages past the last, which read X-Total alone. Each growth step ends with the
database's statistics refreshed (\`VACUUM ANALYZE\` on PostgreSQL), as autovacuum would soon after a bulk load.

![Page depth: X-Runtime of page 1, the middle page and the last page of ${largest} users](bench-page-depth.svg)

![Table size: X-Runtime of the first and last page at each size](bench-table-size.svg)

${[...curves].map(([kind, bySize]) => `${DATABASE_NAMES[kind]}:\n\n${table(bySize)}`).join('\n')}`;
}
