// Module hooks for the test files' processes (docs/architecture.md#running-the-tests): a module of the
// project's TypeScript keeps its .ts URL, and its JavaScript is read from the copy compiled once for the
// run (tools/shared/compiled-sources.ts, compiledSuite), its source map beside. Plain JavaScript: it runs on node's loader
// thread, before anything compiles TypeScript. A .ts file the copy lacks (one written since) is
// compiled here, alone.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

let root = '';
let copy = '';

export function initialize(data) {
  root = data.root;
  copy = data.copy;
}

/** A relative `./x.js` of a TypeScript module is its `./x.ts`, as TypeScript's NodeNext resolution has it. */
export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  if (parent !== undefined && parent.endsWith('.ts') && specifier.endsWith('.js') && (specifier.startsWith('./') || specifier.startsWith('../'))) {
    const typescript = new URL(`${specifier.slice(0, -3)}.ts`, parent);
    if (existsSync(typescript)) return { url: typescript.href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file://') || !url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const compiled = path.startsWith(`${root}/`) ? `${copy}/${path.slice(root.length + 1, -3)}.js` : undefined;
  if (compiled !== undefined && existsSync(compiled)) {
    // Its source map beside it, named from the module's URL (the .ts file's: node takes a map's name
    // relative to it, and no file: URL); the map's names of the sources are relative to the map itself.
    const source = readFileSync(compiled, 'utf8').replace(/\/\/# sourceMappingURL=(\S+)\s*$/, (_line, map) => `//# sourceMappingURL=${relative(dirname(path), join(dirname(compiled), map))}`);
    return { format: 'module', source, shortCircuit: true };
  }
  const { code } = transformSync(readFileSync(path, 'utf8'), { loader: 'ts', format: 'esm', platform: 'node', target: 'node20', sourcemap: 'inline', sourcefile: path });
  return { format: 'module', source: code, shortCircuit: true };
}
