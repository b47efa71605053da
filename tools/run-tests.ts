/**
 * `npm test`: runs the test files given (all of test/*.test.ts when none is), several at a time, each in
 * a process of its own under node:test, and prints each pass's wall time and its ten slowest files.
 * docs/architecture.md ("Running the tests") says how to run one file, one test by name, and why the
 * files may run side by side.
 *
 *   npm test                                   every file
 *   npm test -- test/version.test.ts           just that file (several may be given)
 *   npm test -- test/users-list.test.ts --test-name-pattern='page 2'
 *                                              options beginning with -- go to node's test runner
 *
 * CMI_TEST_CONCURRENCY sets how many files run at once (default: see defaultConcurrency).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledSources, compiledSuite } from './shared/compiled-sources.js';
import { dropOrphanedTestSchemas, vacuumCatalogue } from './shared/postgres-schema.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** A file still running after this long is ended and counted as failed. */
const fileBoundMs = 25 * 60_000;

interface FileResult {
  file: string;
  ms: number;
  /** The CPU time (user and system) of the file's process and every process it waited for; NaN if unknown. */
  cpuMs: number;
  ok: boolean;
  tests: number;
  output: string;
}

/**
 * One file a core: the suite is bound by the CPU (the CLI tests' processes, compiled through tsx, and the
 * servers they start), so more files than cores at once only stretch each file (docs/architecture.md,
 * "Running the tests", gives the measurement).
 */
function defaultConcurrency(): number {
  return Math.max(1, availableParallelism());
}

function parseArguments(argv: string[]): { files: string[]; nodeOptions: string[] } {
  const files: string[] = [];
  const nodeOptions: string[] = [];
  for (const argument of argv) {
    if (argument.startsWith('--')) nodeOptions.push(argument);
    else files.push(resolve(argument));
  }
  if (files.length === 0) {
    const testDir = join(root, 'test');
    for (const name of readdirSync(testDir).sort()) if (name.endsWith('.test.ts')) files.push(join(testDir, name));
  }
  return { files, nodeOptions };
}

const database = process.env.DATABASE_URL ? 'postgres' : 'sqlite';
/** Where the last run's times are kept, so the next run starts the longest files first. */
const timesFile = join(root, 'node_modules', '.cache', 'cmi-tests', `times-${database}.json`);
/**
 * The times a checkout without a run of its own starts from (CI's clean clone): a copy of a whole run's
 * times file, refreshed by hand when files are added or change much (docs/architecture.md#running-the-tests).
 */
const committedTimesFile = join(root, 'tools', `test-times-${database}.json`);

function lastTimes(): Record<string, number> {
  return { ...readTimes(committedTimesFile), ...readTimes(timesFile) };
}

function readTimes(file: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** The module hooks that load the test files' TypeScript from the run's compiled copy (CMI_TEST_SUITE_JS). */
const COMPILED_MODULES = join(root, 'tools/shared/compiled-modules.mjs');

function runFile(file: string, nodeOptions: string[], compiled: { sourcesJs: string; suiteJs: string }): Promise<FileResult> {
  const started = performance.now();
  // Through sh, whose `times` tells (on a fourth descriptor) the CPU time of the file and everything it
  // started: the suite is bound by the CPU, so a file far slower than its CPU time waits on something.
  const child = spawn(
    '/bin/sh',
    ['-c', '"$@"; status=$?; times >&3; exit $status', 'sh', process.execPath, '--import', COMPILED_MODULES, '--test', '--test-force-exit', `--test-timeout=${fileBoundMs}`, '--test-reporter=spec', ...nodeOptions, file],
    { cwd: root, env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', CMI_TEST_SOURCES_JS: compiled.sourcesJs, CMI_TEST_SUITE_JS: compiled.suiteJs }, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] },
  );
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => chunks.push(chunk));
  let times = '';
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (times += chunk.toString()));
  let timedOut = false;
  const bound = setTimeout(() => {
    timedOut = true;
    // node first, then the sh it runs under (killing sh alone leaves node running, holding the pipes).
    if (child.pid !== undefined) spawnSync('pkill', ['-KILL', '-P', String(child.pid)]);
    child.kill('SIGKILL');
  }, fileBoundMs + 30_000);
  return new Promise((resolveResult) => {
    child.on('close', (code) => {
      clearTimeout(bound);
      let output = Buffer.concat(chunks).toString('utf8');
      if (timedOut) output += `\nrun-tests: ended after ${fileBoundMs / 60_000} minutes\n`;
      const tests = Number(/^ℹ tests (\d+)$/m.exec(output)?.[1] ?? 0);
      resolveResult({ file, ms: performance.now() - started, cpuMs: childrenCpuMs(times), ok: code === 0 && !timedOut, tests, output });
    });
  });
}

/** The children's line of sh's `times` ("0m1.230000s 0m0.040000s", user then system) in milliseconds. */
function childrenCpuMs(times: string): number {
  const line = times.trim().split('\n')[1] ?? '';
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)].map(([, minutes, secs]) => (Number(minutes) * 60 + Number(secs)) * 1000);
  return parts.length === 2 ? (parts[0] as number) + (parts[1] as number) : Number.NaN;
}

/** How many files end between two vacuums of the catalogue during a PostgreSQL pass. */
const VACUUM_EVERY_FILES = 15;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

async function main(): Promise<void> {
  const { files, nodeOptions } = parseArguments(process.argv.slice(2));
  const concurrency = Math.max(1, Number(process.env.CMI_TEST_CONCURRENCY) || defaultConcurrency());
  const times = lastTimes();
  const queue = [...files].sort((a, b) => (times[relative(root, b)] ?? 0) - (times[relative(root, a)] ?? 0));
  const showAll = process.argv.slice(2).some((argument) => !argument.startsWith('--'));
  const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite';
  console.log(`run-tests: ${files.length} file(s) on ${database}, ${Math.min(concurrency, files.length)} at a time`);

  const started = performance.now();
  // The cmi processes the tests start run src/ compiled once for this run, and the test files' processes
  // load src/, test/ and tools/ compiled once too (tools/shared/compiled-sources.ts).
  const [sourcesJs, suiteJs] = await Promise.all([compiledSources(root), compiledSuite(root)]);
  // The catalogue rows earlier runs' schemas left dead go first, and those of this run's every few files
  // (tools/shared/postgres-schema.ts): a pass's own schemas left 285,000 dead pg_attribute rows by its end.
  const postgresUrl = /^postgres(ql)?:/.test(process.env.DATABASE_URL ?? '') ? (process.env.DATABASE_URL as string) : undefined;
  if (postgresUrl) {
    const dropped = await dropOrphanedTestSchemas(postgresUrl);
    if (dropped > 0) console.log(`run-tests: dropped ${dropped} test schema(s) that killed test processes left`);
    await vacuumCatalogue(postgresUrl);
  }
  let vacuuming: Promise<void> | undefined;
  const results: FileResult[] = [];
  async function worker(): Promise<void> {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const result = await runFile(file, nodeOptions, { sourcesJs, suiteJs });
      results.push(result);
      const name = relative(root, file);
      if (showAll || !result.ok) process.stdout.write(`\n── ${name}\n${result.output}`);
      console.log(`${result.ok ? 'pass' : 'FAIL'} ${name} (${result.tests} tests, ${seconds(result.ms)})`);
      if (postgresUrl && !vacuuming && results.length % VACUUM_EVERY_FILES === 0) {
        vacuuming = vacuumCatalogue(postgresUrl)
          .catch((error: unknown) => console.log(`run-tests: catalogue vacuum failed: ${String(error)}`))
          .finally(() => (vacuuming = undefined));
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  await vacuuming;
  const wallMs = performance.now() - started;

  const failed = results.filter((result) => !result.ok);
  const tests = results.reduce((sum, result) => sum + result.tests, 0);
  console.log(`\nrun-tests: ${results.length - failed.length} of ${results.length} file(s) passed, ${tests} tests, wall time ${seconds(wallMs)} on ${database}`);
  const cpuMs = results.reduce((sum, result) => sum + result.cpuMs, 0);
  console.log(`CPU time ${seconds(cpuMs)} (${(cpuMs / wallMs).toFixed(2)} cores busy of ${Math.min(concurrency, files.length)})`);
  console.log('slowest files (wall, CPU):');
  for (const result of [...results].sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`  ${seconds(result.ms).padStart(8)} ${seconds(result.cpuMs).padStart(8)}  ${relative(root, result.file)}`);
  const waiting = results.filter((result) => result.ms - result.cpuMs > 10_000).sort((a, b) => b.ms - b.cpuMs - (a.ms - a.cpuMs)).slice(0, 5);
  if (waiting.length > 0) console.log(`waiting more than 10 s beyond their CPU time:\n${waiting.map((result) => `  ${seconds(result.ms - result.cpuMs).padStart(8)}  ${relative(root, result.file)}`).join('\n')}`);
  if (failed.length > 0) console.log(`failed:\n${failed.map((result) => `  ${relative(root, result.file)}`).join('\n')}`);

  for (const result of results) times[relative(root, result.file)] = Math.round(result.ms);
  mkdirSync(dirname(timesFile), { recursive: true });
  writeFileSync(timesFile, JSON.stringify(times, null, 1));
  process.exitCode = failed.length > 0 ? 1 : 0;
}

await main();
