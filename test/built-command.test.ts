import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runProgram, startServer } from './support/cli.js';
import { eventually } from './support/eventually.js';
import { type FreshDatabase, freshDatabase } from './support/database.js';

// Every other test runs the sources through tsx (test/support/cli.ts). This one checks what
// `npm install` and `npm start` run: the `build` script compiling src/ into dist/, and bin/cmi.js
// running dist/. It builds a copy of the project in a temp dir rather than using ./dist, which may be
// older than the sources (or be rebuilt by a benchmark meanwhile).

const ROOT = fileURLToPath(new URL('../', import.meta.url));

const run = (file: string, args: string[], cwd: string) => runProgram(file, args, { cwd });

const filesUnder = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();

describe('the command as installed: bin/cmi.js running what `npm run build` compiles', () => {
  let project: string;
  let bin: string;
  before(() => {
    project = mkdtempSync(join(tmpdir(), 'cmi-built-'));
    for (const entry of ['bin', 'build', 'src', 'static', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(ROOT, entry), join(project, entry), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'));
    bin = join(project, 'bin', 'cmi.js');
  });
  after(() => rmSync(project, { recursive: true, force: true }));

  it('without dist/, says to run npm run build and exits 1', async () => {
    const result = await run(process.execPath, [bin, 'serve'], project);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^cmi: dist\/cli\/main\.js is missing: .*\nRun `npm run build` in the project directory/);
  });

  it('npm run build compiles every source file into dist/, with its source map', async () => {
    // --noCheck: the build's type check is `npm run typecheck`'s (CI runs it); the emitted files are the same.
    const build = await run('npm', ['run', 'build', '--', '--noCheck'], project);
    assert.equal(build.code, 0, build.stdout + build.stderr);
    const sources = filesUnder(join(project, 'src')).filter((file) => file.endsWith('.ts'));
    assert.ok(sources.includes(join('db', 'migrations', 'index.ts')));
    const compiled = sources.flatMap((file) => [file.replace(/\.ts$/, '.js'), file.replace(/\.ts$/, '.js.map')]).sort();
    const vendored = join('node_modules', 'kysely');
    const built = filesUnder(join(project, 'dist'));
    assert.deepEqual(built.filter((file) => !file.startsWith('node_modules') && (file.endsWith('.js') || file.endsWith('.map'))), compiled);
    // kysely bundled into one file where dist/'s imports find it first (build/vendor-dependencies.mjs).
    assert.deepEqual(built.filter((file) => file.startsWith('node_modules')), ['node_modules', vendored, join(vendored, 'index.js'), join(vendored, 'package.json')]);
    const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'kysely', 'package.json'), 'utf8')) as { version: string };
    const bundle = JSON.parse(readFileSync(join(project, 'dist', vendored, 'package.json'), 'utf8')) as { version: string; type: string };
    assert.deepEqual([bundle.version, bundle.type], [installed.version, 'module']);
    const resolved = await run(process.execPath, ['--input-type=module', '-e', "console.log(import.meta.resolve('kysely'))"], join(project, 'dist', 'db'));
    assert.equal(resolved.stdout, `${pathToFileURL(join(project, 'dist', vendored, 'index.js')).href}\n`);
  });

  it('cmi/client, imported by its package name from the build in a fresh process, loads no server module', async () => {
    assert.ok(existsSync(join(project, 'dist', 'client', 'index.d.ts')), 'the build above wrote the types of cmi/client');
    // A resolve hook (in the loader thread) posts every URL resolved; the import is by the package's
    // "exports", as a user of the package writes it.
    const script = `
      import { register } from 'node:module';
      import { MessageChannel } from 'node:worker_threads';
      const { port1, port2 } = new MessageChannel();
      const loaded = [];
      port1.on('message', (url) => loaded.push(url));
      const hooks = 'let port; export function initialize(data) { port = data.port; }' +
        ' export async function resolve(specifier, context, next) { const result = await next(specifier, context); port.postMessage(result.url); return result; }';
      register('data:text/javascript,' + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] });
      const { CmiClient } = await import('cmi/client');
      new CmiClient({ baseUrl: 'http://127.0.0.1:1' });
      await new Promise((done) => setTimeout(done, 200));
      port1.close();
      console.log(JSON.stringify(loaded));`;
    const result = await run(process.execPath, ['--input-type=module', '-e', script], project);
    assert.equal(result.code, 0, result.stderr);
    const loaded = (JSON.parse(result.stdout) as string[]).filter((url) => url.startsWith('file:')).map((url) => fileURLToPath(url));
    assert.ok(loaded.includes(join(project, 'dist', 'client', 'index.js')), result.stdout);
    assert.ok(loaded.some((file) => file.includes('/node_modules/fast-xml-parser/')), 'the XML reader is loaded');
    // Of the server's modules, only the resource definitions the client's records derive from.
    const server = loaded.filter((file) => /\/node_modules\/(fastify|kysely|better-sqlite3|pg|@node-rs|commander)\//.test(file)
      || (file.startsWith(join(project, 'dist')) && !file.startsWith(join(project, 'dist', 'client')) && !/(\.resource|\/resource-definition)\.js$/.test(file)));
    assert.deepEqual(server, []);
  });

  it('serves from dist/: the start-up lines, the version, and a fault recorded with a backtrace of dist/*.js frames', async () => {
    assert.ok(existsSync(join(project, 'dist', 'cli', 'main.js')), 'the build above made dist/');
    const database: FreshDatabase = await freshDatabase();
    const spool = mkdtempSync(join(tmpdir(), 'cmi-built-spool-'));
    const env = { DATABASE_URL: database.url, CMI_ADMIN_PASSWORD: 'built-admin-password', CMI_FAULT_INJECTION: 'capture', CMI_SPOOL_DIR: spool };
    const server = await startServer(env, [], { program: { bin } });
    try {
      assert.doesNotMatch(server.errors, /warning/);
      assert.match(server.output, /^cmi listening on http:\/\/127\.0\.0\.1:\d+ \(.+\)\nCreated administrator "admin" with the password from CMI_ADMIN_PASSWORD\.\nTry: curl /m);
      const authorization = `Basic ${Buffer.from('admin:built-admin-password').toString('base64')}`;
      const version = await fetch(`${server.baseUrl}/version.json`, { headers: { authorization } });
      // The OnApp version it answers as (CMI_ONAPP_VERSION's default; docs/api.md#version).
      assert.deepEqual(await version.json(), { version: '6.7' });
      // The console's files come from static/ beside dist/ (docs/console.md#how-it-is-built).
      const stylesheet = await fetch(`${server.baseUrl}/console/assets/console-css`);
      assert.equal(stylesheet.status, 200);
      assert.equal(await stylesheet.text(), readFileSync(join(project, 'static', 'console', 'console.css'), 'utf8'));

      const fault = await fetch(`${server.baseUrl}/version.json`, { headers: { authorization, 'x-cmi-inject-fault': '1' } });
      assert.equal(fault.status, 500);
      // Faults are written within a second (docs/operations.md#faults-of-cmi).
      let backtrace: string | undefined;
      for (let tries = 0; backtrace === undefined && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const list = await fetch(`${server.baseUrl}/sysadmin_tools/infrastructure/errors.json`, { headers: { authorization } });
        const errors = (await list.json()) as Array<{ infrastructure_error: { error_class: string; backtrace: string } }>;
        backtrace = errors.find((error) => error.infrastructure_error.error_class === 'InjectedFault')?.infrastructure_error.backtrace;
      }
      // Frames of dist/*.js (bin/cmi.js leaves source maps off: docs/operations.md#faults-of-cmi),
      // the fault's own first, then fastify's.
      const [own, ...library] = (backtrace ?? '(not recorded)').split('\n');
      assert.match(own ?? '', /^dist\/http\/hooks\/fault-injection\.js:\d+:in '[^']+'$/);
      assert.ok(library.length > 0 && library.every((frame) => frame.includes('node_modules/fastify/')), backtrace);
    } finally {
      assert.equal(await server.stop(), 0);
      await database.drop();
      rmSync(spool, { recursive: true, force: true });
    }
  });

  it('warns when a source file is newer than dist/, and runs dist/ all the same', async () => {
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(project, 'src', 'config.ts'), later, later);
    const result = await run(process.execPath, [bin, '--help'], project);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Usage: cmi /);
    assert.equal(result.stderr, 'cmi: warning: src/config.ts is newer than dist/, which this runs: `npm run build` compiles the sources as they are now.\n');
    // `cmi serve` looks once it listens (not to delay its first answer), and warns all the same.
    const database = await freshDatabase();
    const server = await startServer({ DATABASE_URL: database.url, CMI_SPOOL_DIR: join(project, 'spool') }, [], { program: { bin } });
    try {
      await eventually(() => assert.ok(server.errors.includes('newer than dist/'), `no warning yet: ${server.errors}`));
      assert.equal(server.errors, 'cmi: warning: src/config.ts is newer than dist/, which this runs: `npm run build` compiles the sources as they are now.\n');
      assert.match(server.output, /^cmi listening on /);
    } finally {
      assert.equal(await server.stop(), 0);
      await database.drop();
    }
  });
});
