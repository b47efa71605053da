import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

/** What a compiled copy of src/ is named: a sibling of src/, so the paths it reads relative to itself (`../../package.json`, static/) hold. */
const PREFIX = '.test-sources-';
const COMPLETE = '.complete';

/**
 * src/ compiled to JavaScript once for a test run, for the `cmi` processes the tests start
 * (tools/shared/server-process.ts): tsx compiles and resolves every module of each such process
 * through its loader hooks, about 2.5 times the CPU of loading JavaScript (docs/architecture.md#running-the-tests).
 * The copy is `<root>/.test-sources-<hash of src/>`, made by esbuild file by file (no bundle, source
 * maps beside, so a backtrace names src/ as under tsx) in a directory of its own renamed into place,
 * and kept for the next run of the same sources; older copies go once they are an hour old.
 */
export async function compiledSources(root: string): Promise<string> {
  const sources = join(root, 'src');
  const files = readdirSync(sources, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts')).sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update('\0').update(readFileSync(join(sources, file))).update('\0');
  const name = `${PREFIX}${hash.digest('hex').slice(0, 16)}`;
  const dir = join(root, name);
  for (const entry of readdirSync(root)) {
    if (entry.startsWith(PREFIX) && entry !== name && Date.now() - statSync(join(root, entry)).mtimeMs > 3_600_000) rmSync(join(root, entry), { recursive: true, force: true });
  }
  if (existsSync(join(dir, COMPLETE))) return dir;
  const next = `${dir}.${process.pid}`;
  await build({
    entryPoints: files.map((file) => join(sources, file)),
    outdir: next,
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
