import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { adminCliEnv, type Finished, runCmi } from './support/cli.js';
import { report } from './support/error-reports.js';

// `cmi releases ls|add`, `cmi errors resolve --in-release|--in-next-release` (docs/cli.md#cmi-releases),
// and `cmi searches add|ls|rm` with `cmi errors ls --saved` (docs/cli.md#cmi-searches), against a real cmi on a random port.
describe('cmi releases, and resolving in a release', () => {
  let t: TestApp;
  let env: Record<string, string>;
  let home: string;
  let id = 0;

  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
    t.time.set('2026-11-20T10:00:00.000Z');
    const url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-releases-'));
    env = adminCliEnv(home, url, ADMIN);
    for (const release of ['6.7.1', '6.7.2']) {
      const res = await report(t, { error_class: 'Api::Quota', message: 'quota exceeded', context: { release } });
      id = (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
    }
  });
  after(async () => {
    await t?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const cmi = (...args: string[]) => runCmi(args, env);
  function succeeded(res: Finished, stdout: string): void {
    assert.deepEqual([res.code, res.stderr], [0, ''], res.stdout);
    assert.equal(res.stdout, stdout);
  }

  it('resolves an error in the next release and in a named one, and says which', async () => {
    succeeded(await cmi('errors', 'resolve', String(id), '--in-next-release'), `Infrastructure error ${id} resolved: resolved in release 6.7.2\n`);
    succeeded(await cmi('errors', 'resolve', String(id), '--in-release', '6.7.1'), `Infrastructure error ${id} resolved: resolved in release 6.7.1\n`);
    const row = await t.database.db.selectFrom('error_triage').select(['triage_status', 'resolved_in_release']).where('error_id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { triage_status: 'resolved', resolved_in_release: '6.7.1' });
    const both = await cmi('errors', 'resolve', String(id), '--in-release', '6.7.1', '--in-next-release');
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /option '--in-release <release>' cannot be used with option '--in-next-release'/);
  });

  it('declares a release and lists them, the newest first, with what each brought', async () => {
    t.time.advance(60);
    succeeded(await cmi('releases', 'add', '6.8.0'), 'Declared release 6.8.0\n');
    succeeded(await cmi('releases', 'add', '6.7.2'), 'Release 6.7.2 is known: first seen 2026-11-20T10:00:00+00:00\n');
    succeeded(await cmi('releases', 'ls'), [
      'NAME   FIRST SEEN                 NEW ERRORS  REGRESSIONS',
      '6.8.0  (declared)                 0           0',
      '6.7.1  2026-11-20T10:00:00+00:00  1           0',
      '6.7.2  2026-11-20T10:00:00+00:00  0           0',
      '3 of 3 releases (page 1 of 1)',
      '',
    ].join('\n'));
    succeeded(await cmi('releases', 'ls', '--all', '--json'), `${JSON.stringify([
      { release: { name: '6.8.0', first_seen: null, errors_new: 0, regressions: 0 } },
      { release: { name: '6.7.1', first_seen: '2026-11-20T10:00:00+00:00', errors_new: 1, regressions: 0 } },
      { release: { name: '6.7.2', first_seen: '2026-11-20T10:00:00+00:00', errors_new: 0, regressions: 0 } },
    ])}\n`);
  });

  it('saves a search, runs it with errors ls --saved (every status unless told), lists and deletes it', async () => {
    const added = await cmi('searches', 'add', 'quota', 'class:Api::Quota', '--shared');
    assert.deepEqual([added.code, added.stderr], [0, ''], added.stdout);
    const searchId = /^Saved search (\d+) "quota" \(shared\): cmi errors ls --saved \1\n$/.exec(added.stdout)?.[1];
    assert.ok(searchId, added.stdout);
    const listed = await cmi('errors', 'ls', '--saved', 'quota', '--json');
    assert.deepEqual([listed.code, (JSON.parse(listed.stdout) as Array<{ infrastructure_error: { id: number } }>).map((e) => e.infrastructure_error.id)], [0, [id]]);
    succeeded(await cmi('searches', 'ls'), `ID  NAME   SHARED  OWNER  QUERY\n${searchId.padEnd(2)}  quota  yes     ${t.admin.id}      class:Api::Quota\n1 of 1 saved searches (page 1 of 1)\n`);
    succeeded(await cmi('searches', 'rm', 'quota'), `Deleted saved search ${searchId} "quota"\n`);
    const gone = await cmi('errors', 'ls', '--saved', 'quota');
    assert.equal(gone.code, 1, gone.stdout);
    assert.match(gone.stderr, /saved must be the id or name of a saved search you can see/);
  });
});
