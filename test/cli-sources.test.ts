import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { type Finished, runCmi } from './support/cli.js';
import { logSourcesRepository } from '../src/logs/log-sources.store.js';

/** `cmi sources ls` (docs/cli.md#cmi-sources) against a real cmi, as child processes. */
describe('cmi sources', () => {
  let t: TestApp;
  let home: string;
  let env: Record<string, string>;

  before(async () => {
    t = await createTestApp();
    const url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-sources-'));
    env = { XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password, CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '' };
    const at = (seconds: number) => new Date(Date.parse('2026-11-20T10:00:00.000Z') + seconds * 1000);
    await logSourcesRepository(t.database).add([
      { host: 'hv-7', program: 'libvirtd', component: 'nova', keyId: 3, lines: 120, errors: 2, firstAt: at(0), lastAt: at(90) },
      { host: 'hv-8', program: '', component: null, keyId: 3, lines: 5, errors: 0, firstAt: at(30), lastAt: at(30) },
    ]);
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const cmi = (args: string[], extra: Record<string, string> = {}) => runCmi(args, { ...env, ...extra });
  function succeeded(res: Finished, stdout: string): void {
    assert.deepEqual([res.stderr, res.code], ['', 0]);
    assert.equal(res.stdout, stdout);
  }

  it('ls lists the sources in a table, filtered, a page at a time; --json is the API\'s body', async () => {
    succeeded(await cmi(['sources', 'ls']), [
      'ID  HOST  PROGRAM   COMPONENT  KEY  LINES  ERRORS  FIRST SEEN                 LAST SEEN',
      '1   hv-7  libvirtd  nova       3    120    2       2026-11-20T10:00:00+00:00  2026-11-20T10:01:30+00:00',
      '2   hv-8  -         -          3    5      0       2026-11-20T10:00:30+00:00  2026-11-20T10:00:30+00:00',
      '2 of 2 sources (page 1 of 1)',
      '',
    ].join('\n'));
    succeeded(await cmi(['sources', 'ls', '--component', 'nova', '--per-page', '1']), [
      'ID  HOST  PROGRAM   COMPONENT  KEY  LINES  ERRORS  FIRST SEEN                 LAST SEEN',
      '1   hv-7  libvirtd  nova       3    120    2       2026-11-20T10:00:00+00:00  2026-11-20T10:01:30+00:00',
      '1 of 1 sources (page 1 of 1)',
      '',
    ].join('\n'));
    const api = await t.app.inject({ method: 'GET', url: '/sysadmin_tools/infrastructure/sources.json?per_page=1&page=2', headers: { authorization: t.adminAuth } });
    succeeded(await cmi(['sources', 'ls', '--per-page', '1', '--page', '2', '--json']), `${api.body}\n`);
    const all = await cmi(['sources', 'ls', '--all', '--program', '', '--json']);
    assert.deepEqual([all.code, (JSON.parse(all.stdout) as Array<{ log_source: { host: string } }>).map((s) => s.log_source.host)], [0, ['hv-8']]);
  });

  it('refuses a bad page and an ordinary user', async () => {
    const bad = await cmi(['sources', 'ls', '--page', '0']);
    assert.deepEqual([bad.code, bad.stderr], [2, 'cmi: --page must be a positive integer (got "0")\n']);
    const alice = await cmi(['sources', 'ls'], { CMI_USER: ALICE.login, CMI_PASSWORD: ALICE.password });
    assert.deepEqual([alice.code, alice.stdout, alice.stderr], [1, '', 'cmi: You are not authorized to perform this action (needs infrastructure_errors.read)\n']);
  });
});
