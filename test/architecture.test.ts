import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** `cli` for cli/..., `config` for config.ts (paths relative to src/). */
const layerOf = (file: string) => file.split('/')[0]!.replace(/\.ts$/, '');

/** Every relative import of every file in src/ (type-only ones too), as [file, imported file], relative to src/. */
function imports(): Array<[string, string]> {
  return sourceFiles(SRC).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)(?:[^;]*? from)? '(\.[^']+)';$/gms)].map(
      (match): [string, string] => [relative(SRC, file), relative(SRC, resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')))],
    ),
  );
}

/** The layer table of docs/architecture.md, bottom first: layer -> the layers it may import. */
function documentedLayers(): Map<string, string[]> {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const table = doc.slice(doc.indexOf('<!-- layers:')).split('\n\n')[0]!;
  const rows = [...table.matchAll(/^\| ([\w-]+) \| ([^|]+) \|$/gm)].filter((row) => row[1] !== 'layer');
  return new Map(rows.map((row) => [row[1]!, row[2]!.split(',').map((item) => item.trim()).filter((item) => item !== '—')]));
}

/** Every cycle of `graph` found by a depth-first walk, each as the path that closes it. */
function cycles(graph: Map<string, Set<string>>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next].join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

/** The index of the parenthesis that closes the one at `open`. */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth += 1;
    else if (text[i] === ')' && --depth === 0) return i;
  }
  return text.length;
}

/** Whether `args`, the text between a call's parentheses, holds more than one argument. */
function severalArguments(args: string): boolean {
  let depth = 0;
  for (const character of args) {
    if ('([{'.includes(character)) depth += 1;
    else if (')]}'.includes(character)) depth -= 1;
    else if (character === ',' && depth === 0) return true;
  }
  return false;
}

/** Every `assert.ok(x)` or `assert(x)` without a message inside an `eventually(...)` of the tests, as file:line. */
function bareAssertsInEventually(): string[] {
  const testDir = join(ROOT, 'test');
  return sourceFiles(testDir).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(/\beventually\(/g)].flatMap((call) => {
      const open = call.index + call[0].length - 1;
      const block = text.slice(open, closing(text, open) + 1);
      return [...block.matchAll(/\bassert(?:\.ok)?\(/g)]
        .filter((inner) => !severalArguments(block.slice(inner.index + inner[0].length, closing(block, inner.index + inner[0].length - 1))))
        .map(() => `${relative(ROOT, file)}:${text.slice(0, call.index).split('\n').length}`);
    });
  });
}

function graphOf(edges: Iterable<[string, string]>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [from, to] of edges) if (from !== to) (graph.get(from) ?? graph.set(from, new Set()).get(from)!).add(to);
  return graph;
}

describe('docs/architecture.md', () => {
  it('lists exactly the arrows between layers that the imports in src/ draw', () => {
    const drawn = new Set<string>();
    for (const [file, target] of imports()) {
      const [from, to] = [layerOf(file), layerOf(target)];
      if (from !== to) drawn.add(`${from} -> ${to}`);
    }
    const documented = new Set<string>();
    for (const [layer, allowed] of documentedLayers()) for (const item of allowed) documented.add(`${layer} -> ${item}`);
    assert.deepEqual([...drawn].sort(), [...documented].sort());
  });

  it('has every arrow point down: a layer imports only layers listed before it (alerts -> tracker -> users, never back)', () => {
    const order = [...documentedLayers().keys()];
    assert.deepEqual(new Set(order), new Set(sourceFiles(SRC).map((file) => layerOf(relative(SRC, file)))), 'one row for each folder (and file) of src/');
    const upward = [...documentedLayers()].flatMap(([layer, allowed]) =>
      allowed.filter((item) => order.indexOf(item) >= order.indexOf(layer)).map((item) => `${layer} -> ${item}`));
    assert.deepEqual(upward, []);
  });

  it('no files import each other in a cycle', () => {
    assert.deepEqual(cycles(graphOf(imports())), []);
  });

  it('no folders import each other in a cycle, at any depth (a folder and its subfolder included)', () => {
    assert.deepEqual(cycles(graphOf(imports().map(([file, target]): [string, string] => [dirname(file), dirname(target)]))), []);
  });

  it('no code outside db/dialects/ asks which database it is on', () => {
    const asking = sourceFiles(SRC)
      .filter((file) => !relative(SRC, file).startsWith('db/dialects/'))
      .filter((file) => /['"](sqlite|postgres)['"]|PostgresAdapter|SqliteAdapter/.test(readFileSync(file, 'utf8')));
    assert.deepEqual(asking.map((file) => relative(SRC, file)), []);
  });

  it('no file in tools/ imports from test/: the tests import the benchmarks\' shared pieces from tools/shared/, never the reverse', () => {
    const reachingIntoTest = sourceFiles(join(ROOT, 'tools')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)(?:[^;]*? from)? '(\.[^']+)';$/gms)]
        .map((match) => relative(ROOT, resolve(dirname(file), match[1]!)))
        .filter((target) => target === 'test' || target.startsWith('test/'))
        .map((target) => `${relative(ROOT, file)} -> ${target}`),
    );
    assert.deepEqual(reachingIntoTest, []);
  });

  it('lists every test file under its tests', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const listed = [...doc.slice(doc.indexOf('## Tests')).matchAll(/^\| `(test\/[\w-]+\.test\.ts)` \|/gm)].map((row) => row[1]).sort();
    const files = readdirSync(join(ROOT, 'test')).filter((name) => name.endsWith('.test.ts')).map((name) => `test/${name}`).sort();
    assert.deepEqual(listed, files);
  });

  // test/support/eventually.ts says why: a bare assert.ok that fails parses the test's source each try.
  it('every assert.ok in a check that eventually() retries carries a message', () => {
    assert.deepEqual(bareAssertsInEventually(), []);
  });
});
