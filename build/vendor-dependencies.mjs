// Runs after `npm run build` (npm's `postbuild`): bundles each dependency named below into one file,
// dist/node_modules/<name>/index.js, which Node finds first for every `import '<name>'` in dist/
// (it looks in the nearest node_modules). kysely ships its ES modules as some 400 files, loaded one by
// one; one bundle loads faster (docs/operations.md#start-up; `npm run bench -- --only start` measures
// start-up). The files stay under a node_modules directory, so a fault's
// backtrace still tells kysely's frames from cmi's own (docs/error-grouping.md). Tests run the
// sources through tsx and never see these bundles.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/** ES-module dependencies worth loading as one file; what each is must stay an ES module. */
const VENDORED = ['kysely'];

for (const name of VENDORED) {
  const { version } = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8'));
  const dir = join(root, 'dist', 'node_modules', name);
  mkdirSync(dir, { recursive: true });
  await build({
    entryPoints: [name],
    absWorkingDir: root,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outfile: join(dir, 'index.js'),
    legalComments: 'inline',
    logLevel: 'warning',
  });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name, version, type: 'module', exports: './index.js', description: `${name} ${version} bundled by build/vendor-dependencies.mjs` }, null, 2)}\n`);
}
