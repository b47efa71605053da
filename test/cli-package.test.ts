import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Whether dist/ is missing or older than a source of src/ (as bin/cmi.js warns). */
function changedSinceBuild(): boolean {
  return readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).some((file) => {
    if (!file.endsWith('.ts')) return false;
    const compiled = statSync(join(ROOT, 'dist', `${file.slice(0, -3)}.js`), { throwIfNoEntry: false });
    return compiled === undefined || statSync(join(ROOT, 'src', file)).mtimeMs > compiled.mtimeMs;
  });
}

/**
 * The command outside the checkout (docs/cli.md#installing): `npm pack` makes a tarball of bin/, dist/
 * and static/ (package.json "files"), and that tarball, installed as `npm install -g` lays one out, gives a `cmi` on PATH that
 * runs from any directory.
 *
 * `npm install -g TARBALL` itself fetches the tarball's dependencies from the registry, which a test must
 * not reach (and npm's cache here holds no metadata for them: `--offline` answers ENOTCACHED). So this test
 * does what that install does with the tarball, by hand: unpacks it into PREFIX/lib/node_modules/cmi and
 * links PREFIX/bin/cmi to its bin, and stands the checkout's installed dependencies (the versions
 * package-lock.json pins) in for the fetched ones.
 */
describe('cmi packed and installed outside the checkout', () => {
  let temp: string;
  let tarball: string;
  before(async () => {
    temp = mkdtempSync(join(tmpdir(), 'cmi-package-'));
    // `npm pack` builds dist/ first (the `prepare` script), a minute of tsc on this machine: here only when a
    // source is newer than its build (bin/cmi.js's own test), then packed without running it again.
    if (changedSinceBuild()) await run('npm', ['run', 'build', '--silent'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    await run('npm', ['pack', '--pack-destination', temp, '--silent', '--ignore-scripts'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    tarball = join(temp, readdirSync(temp).find((name) => name.endsWith('.tgz'))!);
  });
  after(() => rmSync(temp, { recursive: true, force: true }));

  it('the tarball holds bin/, dist/ and static/ and no sources or tests', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 16 * 1024 * 1024 });
    const files = stdout.trim().split('\n');
    for (const file of ['package/package.json', 'package/bin/cmi.js', 'package/dist/cli/main.js', 'package/dist/client/index.js', 'package/static/console/favicon.svg']) {
      assert.ok(files.includes(file), `${file} is packed`);
    }
    assert.deepEqual(files.filter((file) => /^package\/(src|test|tools|docs)\//.test(file)), []);
  });

  it('installed under a prefix: PREFIX/bin/cmi --version and --help, run from a directory outside the checkout', async () => {
    const prefix = join(temp, 'prefix');
    const home = join(prefix, 'lib', 'node_modules', 'cmi');
    mkdirSync(home, { recursive: true });
    mkdirSync(join(prefix, 'bin'));
    await run('tar', ['-xzf', tarball, '-C', home, '--strip-components=1']);
    symlinkSync(join(ROOT, 'node_modules'), join(home, 'node_modules'));
    symlinkSync(join('..', 'lib', 'node_modules', 'cmi', 'bin', 'cmi.js'), join(prefix, 'bin', 'cmi'));
    const elsewhere = mkdtempSync(join(tmpdir(), 'cmi-elsewhere-'));
    try {
      const env = { PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}`, HOME: elsewhere };
      const version = await run('cmi', ['--version'], { cwd: elsewhere, env });
      assert.deepEqual([version.stdout, version.stderr], ['cmi 1.0.0\n', '']);
      const help = await run('cmi', ['--help'], { cwd: elsewhere, env });
      assert.match(help.stdout, /^Usage: cmi \[options\] \[command\]\n/);
      assert.match(help.stdout, /\n {2}errors +infrastructure errors on a server/);
      assert.equal(help.stderr, '');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
