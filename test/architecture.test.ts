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

/** `cli` for src/cli/..., `config` for src/config.ts. */
const layerOf = (file: string) => relative(SRC, file).split('/')[0]!.replace(/\.ts$/, '');

/** Every relative import of every file in src/, as [file, imported file]. */
function imports(): Array<[string, string]> {
  return sourceFiles(SRC).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)(?:[^;]*? from)? '(\.[^']+)';$/gms)].map(
      (match): [string, string] => [file, resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts'))],
    ),
  );
}

/** The layer table of docs/architecture.md: layer -> the layers it may import (with their notes). */
function documentedLayers(): Map<string, string[]> {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const table = doc.slice(doc.indexOf('<!-- layers:')).split('\n\n')[0]!;
  const rows = [...table.matchAll(/^\| (\w+) \| ([^|]+) \|$/gm)].filter((row) => row[1] !== 'layer');
  return new Map(rows.map((row) => [row[1]!, row[2]!.split(',').map((item) => item.trim())]));
}

describe('docs/architecture.md', () => {
  it('lists exactly the arrows between layers that the imports in src/ draw', () => {
    const drawn = new Set<string>();
    for (const [file, target] of imports()) {
      const [from, to] = [layerOf(file), layerOf(target)];
      if (from !== to) drawn.add(`${from} -> ${to}`);
    }
    const documented = new Set<string>();
    for (const [layer, allowed] of documentedLayers()) {
      for (const item of allowed) documented.add(`${layer} -> ${item.split(' ')[0]}`);
    }
    assert.deepEqual([...drawn].sort(), [...documented].sort());
  });

  it('no file of server/ but the composition root imports store/, as its table says', () => {
    assert.deepEqual(documentedLayers().get('server')?.filter((item) => item.startsWith('store')), ['store (app.ts only)']);
    const serverToStore = imports().filter(([file, target]) => layerOf(file) === 'server' && layerOf(target) === 'store');
    assert.deepEqual([...new Set(serverToStore.map(([file]) => relative(SRC, file)))], ['app/app.ts']);
  });

  it('no code outside store/dialects/ asks which database it is on', () => {
    const asking = sourceFiles(SRC)
      .filter((file) => !relative(SRC, file).startsWith('store/dialects/'))
      .filter((file) => /['"](sqlite|postgres)['"]|PostgresAdapter|SqliteAdapter/.test(readFileSync(file, 'utf8')));
    assert.deepEqual(asking.map((file) => relative(SRC, file)), []);
  });

  it('lists every test file under its tests', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const listed = [...doc.slice(doc.indexOf('## Tests')).matchAll(/^\| `(test\/[\w-]+\.test\.ts)` \|/gm)].map((row) => row[1]).sort();
    const files = readdirSync(join(ROOT, 'test')).filter((name) => name.endsWith('.test.ts')).map((name) => `test/${name}`).sort();
    assert.deepEqual(listed, files);
  });
});
