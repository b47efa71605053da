/**
 * `npm run bench`: every benchmark of cmi in one command, which rewrites docs/benchmarks.md (and its
 * charts, docs/bench-*.svg). docs/benchmarks.md says what each section measures and how.
 *
 *   npm run bench                                  everything, on SQLite
 *   npm run bench -- --postgres postgres://postgres@127.0.0.1:5432/test
 *                                                  on PostgreSQL as well (BENCH_POSTGRES_URL does the same);
 *                                                  a schema of its own, dropped after
 *   npm run bench -- --only throughput,start       some sections; the others stay as the document has them
 *   npm run bench -- --only errors --errors C,D    some of the error tracker's scenarios (A-F)
 *   npm run bench -- --only profile                where the CPU goes: cmi, bare fastify and raw node:http per answer
 *   npm run bench -- --only webhooks               the alert counts (a storm of one error, a receiver down 30 s)
 *   npm run bench -- --only logs                   the log sources: syslog, journald and OTLP records/s, the API's p99 meanwhile
 *   npm run bench -- --workers 1                   the throughput figures with --workers 1 only (default 1,2)
 *   npm run bench -- --quick                       about a minute, small data: writes .bench/quick.md
 *                                                  (and .bench/bench-*.svg), never docs/
 *   npm run bench -- --help                        the options and sections, and nothing run
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { authSection } from './auth.js';
import { type DatabaseKind, sharedDatabases } from './datasets.js';
import { introduction, runInfo, type SectionName, SECTIONS, writeDocument } from './document.js';
import { ERROR_SCENARIOS, errorsSection } from './errors.js';
import { logsSection } from './logs.js';
import { mixedSection } from './mixed.js';
import { profileSection } from './profile.js';
import { queriesSection } from './queries.js';
import { scaleSection } from './scale.js';
import { startSection } from './start.js';
import { buildDist, ROOT } from './support.js';
import { throughputSection } from './throughput.js';
import { webhooksSection } from './webhooks.js';
import { workersSection } from './workers.js';
import { ensureWrk } from './wrk.js';

const argv = process.argv.slice(2);
function option(name: string): string | undefined {
  const at = argv.indexOf(name);
  if (at === -1) return undefined;
  const value = argv[at + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value`);
  return value;
}
const known = new Set(['--quick', '--only', '--postgres', '--workers', '--errors']);
if (argv.includes('--help')) {
  process.stdout.write([
    'npm run bench [-- options]: every benchmark; rewrites docs/benchmarks.md, which says what each section measures',
    'options: --quick, --only <section,...>, --postgres <url>, --workers <count,...> (default 1,2), --errors <scenario,...>',
    `sections: ${SECTIONS.join(', ')}`,
    `error scenarios: ${ERROR_SCENARIOS.join(', ')}`,
  ].join('\n') + '\n');
  process.exit(0);
}
for (const arg of argv) {
  if (arg.startsWith('--') && !known.has(arg)) throw new Error(`unknown option ${arg}; options: ${[...known].join(', ')}`);
}

const QUICK = argv.includes('--quick');
const POSTGRES = option('--postgres') ?? (process.env.BENCH_POSTGRES_URL || undefined);
const ONLY = option('--only')?.split(',') ?? (QUICK ? ['throughput', 'start', 'scale'] : [...SECTIONS]);
for (const name of ONLY) if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`--only: no section ${name}; sections: ${SECTIONS.join(', ')}`);
const WORKERS = (option('--workers') ?? (QUICK ? '1' : '1,2')).split(',').map(Number);
const ERRORS = (option('--errors') ?? ERROR_SCENARIOS.join(',')).toUpperCase().split(',');

const sizes = QUICK ? [1_000, 10_000] : [1_000, 10_000, 100_000, 1_000_000];
const settings = {
  users: sizes.at(-1) as number,
  errors: QUICK ? 10_000 : 100_000,
  seconds: QUICK ? 1 : 5,
  warmUpSeconds: QUICK ? 0 : 2,
  rounds: 3,
};
const kinds: DatabaseKind[] = POSTGRES ? ['sqlite', 'postgres'] : ['sqlite'];
const outputDir = QUICK ? join(ROOT, '.bench') : join(ROOT, 'docs');
const output = join(outputDir, QUICK ? 'quick.md' : 'benchmarks.md');

// The URL stays out of the document (it may carry a password).
const shown = argv.map((arg, k) => (argv[k - 1] === '--postgres' ? '<url>' : arg));
const info = runInfo(`npm run bench${shown.length > 0 ? ` -- ${shown.join(' ')}` : ''}`, QUICK);

ensureWrk();
buildDist();
mkdirSync(outputDir, { recursive: true });
const data = sharedDatabases(POSTGRES);
const failures: string[] = [];
const fresh = new Map<string, string>();
const started = performance.now();
// Scale first: it grows each shared database from 1,000 users to the largest size, which the
// throughput and start sections then use as it is.
const order: SectionName[] = ['scale', 'throughput', 'profile', 'start', 'errors', 'queries', 'auth', 'workers', 'webhooks', 'logs', 'mixed'];
try {
  for (const name of order.filter((section) => ONLY.includes(section))) {
    console.log(`== ${name}`);
    let text: string;
    if (name === 'scale') text = await scaleSection({ info, data, kinds, sizes, chartDir: outputDir });
    else if (name === 'throughput') text = await throughputSection({ info, data, kinds, workers: WORKERS, quick: QUICK, ...settings });
    else if (name === 'profile') text = await profileSection({ info, data, kinds, users: settings.users, errors: settings.errors, seconds: settings.seconds });
    else if (name === 'start') text = await startSection({ info, data, kinds, users: settings.users, starts: 3 });
    else if (name === 'errors') text = await errorsSection({ info, data, postgres: POSTGRES, quick: QUICK, scenarios: ERRORS, failures });
    else if (name === 'queries') text = await queriesSection({ info, kinds, ...(POSTGRES ? { postgres: POSTGRES } : {}), quick: QUICK, failures });
    else if (name === 'auth') text = await authSection({ info, rounds: QUICK ? 3 : 5, seconds: QUICK ? 1 : 4 });
    else if (name === 'mixed') text = await mixedSection({ info, kinds, postgres: POSTGRES, quick: QUICK, rounds: settings.rounds });
    else if (name === 'logs') text = await logsSection({ info, quick: QUICK, rounds: settings.rounds, seconds: settings.seconds, failures });
    else if (name === 'webhooks') text = await webhooksSection({ info, kinds, postgres: POSTGRES, quick: QUICK, failures });
    else text = await workersSection({ info, rounds: QUICK ? 3 : 5, seconds: QUICK ? 1 : 5 });
    console.log(text);
    fresh.set(name, text);
    // Written after each section: a later one failing keeps the figures already measured.
    writeDocument(output, introduction(QUICK), fresh);
  }
} finally {
  await data.dropAll();
}
console.log(`Wrote ${output} (${[...fresh.keys()].join(', ')}) in ${((performance.now() - started) / 1000).toFixed(0)} s`);
if (failures.length > 0) {
  console.error(`Counts not exact: ${failures.join('; ')}`);
  process.exitCode = 1;
}
