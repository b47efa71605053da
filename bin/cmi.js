#!/usr/bin/env node
// Runs the JavaScript compiled from src/ into dist/: `npm install` and `npm ci` build it (the
// `prepare` script), `npm run build` rebuilds it. The tests run the sources through tsx instead
// (test/support/cli.ts).
import cluster from 'node:cluster';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const main = join(root, 'dist', 'cli', 'main.js');

if (!existsSync(main)) {
  process.stderr.write(
    'cmi: dist/cli/main.js is missing: cmi runs the JavaScript compiled from src/ into dist/.\n' +
      'Run `npm run build` in the project directory (npm install does it, unless scripts are turned off), then try again.\n',
  );
  process.exit(1);
}

/** The first source file changed since dist/ was built (newer than its .js, or never compiled), if any. */
function changedSinceBuild() {
  const sources = join(root, 'src');
  if (!existsSync(sources)) return undefined;
  return readdirSync(sources, { recursive: true, encoding: 'utf8' }).find((file) => {
    if (!file.endsWith('.ts')) return false;
    const compiled = statSync(join(root, 'dist', `${file.slice(0, -3)}.js`), { throwIfNoEntry: false });
    return compiled === undefined || statSync(join(sources, file)).mtimeMs > compiled.mtimeMs;
  });
}

// Edited or pulled sources run only once compiled: say so rather than run the older build unnoticed.
function warnIfChanged() {
  const changed = cluster.isPrimary ? changedSinceBuild() : undefined;
  if (changed !== undefined) {
    process.stderr.write(`cmi: warning: src/${changed} is newer than dist/, which this runs: \`npm run build\` compiles the sources as they are now.\n`);
  }
}
// `cmi serve` looks once it listens: walking src/ takes a start 20-30 ms before its first answer
// (docs/benchmarks.md#start); every other command looks first.
const serving = process.argv[2] === 'serve';
if (!serving) warnIfChanged();

// Source maps stay off: applying them to a stack costs several times what formatting it does, and
// in a storm of faults every one is captured (docs/operations.md#faults-of-cmi). Stacks name
// dist/*.js, which tsc writes close to the sources; NODE_OPTIONS=--enable-source-maps maps them.
try {
  await import(pathToFileURL(main).href);
} finally {
  // Also when dist/ fails to load: an older build is then the likely cause.
  if (serving) warnIfChanged();
}
