import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const COMPLETE = '.complete';

/**
 * A compiled copy of the TypeScript under `dirs` of `root`, made once and kept for the next run of the
 * same sources: `<root>/<prefix><hash of the files>`, made by esbuild file by file (no bundle, source
 * maps beside, so a backtrace names the .ts file and line) in a
 * directory of its own renamed into place; older copies of the prefix go once they are an hour old.
 */
async function compiledCopy(root: string, prefix: string, dirs: readonly string[], outbase: string): Promise<string> {
  const files = dirs.flatMap((dir) => readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts')).map((file) => join(dir, file))).sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update('\0').update(readFileSync(join(root, file))).update('\0');
  const name = `${prefix}${hash.digest('hex').slice(0, 16)}`;
  const dir = join(root, name);
  for (const entry of readdirSync(root)) {
    if (entry.startsWith(prefix) && entry !== name && Date.now() - statSync(join(root, entry)).mtimeMs > 3_600_000) rmSync(join(root, entry), { recursive: true, force: true });
  }
  if (existsSync(join(dir, COMPLETE))) return dir;
  const next = `${dir}.${process.pid}`;
  await build({
    entryPoints: files.map((file) => join(root, file)),
    outdir: next,
    outbase: join(root, outbase),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
  });
  writeFileSync(join(next, COMPLETE), '');
  try {
    renameSync(next, dir);
  } catch {
    // Another run made the same copy meanwhile.
    rmSync(next, { recursive: true, force: true });
  }
  return dir;
}

/**
 * src/ compiled to JavaScript once for a test run, for the `cmi` processes the tests start
 * (tools/shared/server-process.ts): tsx compiles and resolves every module of each such process
 * through its loader hooks, about 2.5 times the CPU of loading JavaScript (docs/architecture.md#running-the-tests).
 * The copy is `<root>/.test-sources-<hash of src/>`, a sibling of src/ so the paths it reads relative to
 * itself (`../../package.json`, static/) hold, with source maps beside (a backtrace names src/ as under tsx).
 */
export function compiledSources(root: string): Promise<string> {
  return compiledCopy(root, '.test-sources-', ['src'], 'src');
}

/**
 * src/, test/ and tools/ compiled once for a test run, for the test files' own processes, which load
 * them through tools/shared/compiled-modules-hooks.mjs: each module keeps its .ts URL (so every path a
 * test reads relative to itself holds) and its JavaScript comes from `<root>/.test-suite-<hash>/<same
 * path>.js`, its source map beside (docs/architecture.md#running-the-tests).
 */
export function compiledSuite(root: string): Promise<string> {
  return compiledCopy(root, '.test-suite-', ['src', 'test', 'tools'], '.');
}
