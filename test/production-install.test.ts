import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runProgram, startServer } from './support/cli.js';
import { onPostgres } from './support/database.js';

// The production install an operator runs on a fresh clone (docs/operations.md#production):
// `npm ci --omit=dev` installs no dev dependency and still compiles dist/, and `npm start` serves.
// It installs from npm's cache where it can (--prefer-offline), and better-sqlite3's native module from
// a local prebuild (prebuild-install's `local-prebuilds`, the way an offline mirror serves it) made of
// the module this checkout's own `npm ci` compiled: compiling it again took two of the pass's twelve
// minutes and proves nothing that install did not. It runs once, on the SQLite run of the suite.

const ROOT = fileURLToPath(new URL('../', import.meta.url));

describe('npm ci --omit=dev on a fresh copy', { skip: onPostgres && 'installs once, on the SQLite run of the suite' }, () => {
  it('installs no dev dependency, compiles dist/, and the installed cmi serves', { timeout: 900_000 }, async () => {
    const project = mkdtempSync(join(tmpdir(), 'cmi-production-'));
    try {
      for (const entry of ['bin', 'build', 'src', 'static', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(ROOT, entry), join(project, entry), { recursive: true });
      const prebuilds = join(project, 'prebuilds');
      mkdirSync(prebuilds);
      const sqlite = join(ROOT, 'node_modules', 'better-sqlite3');
      const { version } = JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8')) as { version: string };
      const prebuild = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
      execFileSync('tar', ['-czf', join(prebuilds, prebuild), '-C', sqlite, 'build/Release/better_sqlite3.node']);
      const install = await runProgram('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], {
        cwd: project,
        // npm warns that it does not know the setting; it hands it to the install script all the same.
        env: { ...process.env, npm_config_better_sqlite3_local_prebuilds: prebuilds },
      });
      assert.equal(install.code, 0, install.stderr);
      // The lock marks what only the dev dependencies need (ajv, say, fastify needs too).
      const { packages } = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
      const devOnly = Object.entries(packages).filter(([path, entry]) => entry.dev === true && path.startsWith('node_modules/')).map(([path]) => path);
      assert.ok(devOnly.includes('node_modules/eslint') && devOnly.includes('node_modules/tsx'), 'the lock marks the dev tools');
      assert.deepEqual(devOnly.filter((path) => existsSync(join(project, path))), []);
      assert.equal(existsSync(join(project, 'dist', 'cli', 'main.js')), true);
      // The prebuild holds the module alone; node-gyp would have left its objects and Makefile beside it.
      assert.deepEqual(readdirSync(join(project, 'node_modules', 'better-sqlite3', 'build')), ['Release']);

      const server = await startServer(
        { DATABASE_URL: `sqlite:${join(project, 'data', 'cmi.sqlite3')}`, CMI_ADMIN_PASSWORD: 'production-password' },
        [],
        { program: { bin: join(project, 'bin', 'cmi.js') } },
      );
      try {
        const res = await fetch(`${server.baseUrl}/version.json`, { headers: { authorization: `Basic ${Buffer.from('admin:production-password').toString('base64')}` } });
        assert.deepEqual([res.status, await res.text()], [200, '{"version":"6.7"}']);
      } finally {
        assert.equal(await server.stop(), 0);
      }
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
