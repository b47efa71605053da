import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { type Finished, runCmi } from './support/cli.js';
import { eventually } from './support/eventually.js';
import { login, withCookie } from './support/http.js';

// `cmi users sessions drop <user>|--all`, `cmi users access-log <user>` (docs/cli.md#sessions-and-access-history)
// and `cmi users yubi-keys list|add|remove` (docs/cli.md#yubikeys)
// against a real cmi on a random port, as child processes.
describe('cmi users sessions, access-log and yubi-keys', () => {
  let t: TestApp;
  let env: Record<string, string>;
  let home: string;
  before(async () => {
    t = await createTestApp();
    const url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-sessions-'));
    env = { XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password, CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '', DATABASE_URL: `sqlite:${join(home, 'unused.sqlite3')}` };
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const succeeded = (res: Finished, stdout: string) => {
    assert.equal(res.stderr, '');
    assert.equal(res.stdout, stdout);
    assert.equal(res.code, 0);
  };
  const sessionWorks = async (token: string) => (await t.app.inject({ url: '/version.json', headers: withCookie(token) })).statusCode === 200;

  it('drop USER ends that user\'s sessions only', async () => {
    const alice = await login(t.app, t.aliceAuth);
    const admin = await login(t.app, t.adminAuth);
    succeeded(await runCmi(['users', 'sessions', 'drop', 'alice'], env), `Ended every session of user ${t.alice.id} "alice" (its password and API keys keep working)\n`);
    assert.equal(await sessionWorks(alice), false);
    assert.equal(await sessionWorks(admin), true);
  });

  it('drop --all ends everyone\'s; neither or both is a usage error', async () => {
    const alice = await login(t.app, t.aliceAuth);
    const admin = await login(t.app, t.adminAuth);
    succeeded(await runCmi(['users', 'sessions', 'drop', '--all'], env), 'Ended every session of every user (passwords and API keys keep working)\n');
    assert.equal(await sessionWorks(alice), false);
    assert.equal(await sessionWorks(admin), false);
    const neither = await runCmi(['users', 'sessions', 'drop'], env);
    assert.deepEqual([neither.code, neither.stdout, neither.stderr], [2, '', 'cmi: give a user (id, login or email), or --all\n']);
    const both = await runCmi(['users', 'sessions', 'drop', 'alice', '--all'], env);
    assert.deepEqual([both.code, both.stdout, both.stderr], [2, '', 'cmi: give a user or --all, not both\n']);
  });

  it('access-log prints the user\'s sign-ins, and --json the API\'s answer', async () => {
    // Alice signed in above (its Basic credential verified once; the cache answered the rest).
    const json = await eventually(async () => {
      const res = await t.app.inject({ url: `/users/${t.alice.id}/last_access_log.json?per_page=1000`, headers: { authorization: t.adminAuth } });
      const rows = JSON.parse(res.body) as unknown[];
      assert.ok(rows.length >= 1, 'alice\'s sign-in written');
      return { body: res.body, rows: rows.length };
    });
    succeeded(await runCmi(['users', 'access-log', 'alice', '--json'], env), `${json.body}\n`);
    const text = await runCmi(['users', 'access-log', 'alice'], env);
    assert.equal(text.stderr, '');
    const lines = text.stdout.split('\n');
    assert.match(lines[0] ?? '', /^AT {25}ADDRESS {4}CREDENTIAL {2}SIGNED IN {2}USER AGENT$/);
    assert.match(lines[1] ?? '', /^2026-11-20T10:00:00\+00:00 {2}127\.0\.0\.1 {2}password {4}yes {8}lightMyRequest$/);
    assert.equal(lines[json.rows + 1], `${json.rows} sign-ins of user ${t.alice.id} "alice"`);
  });

  it('yubi-keys add|list|remove record a key by its public id, list it and forget it', async () => {
    succeeded(await runCmi(['users', 'yubi-keys', 'list', 'alice'], env), `No YubiKeys recorded for user ${t.alice.id} "alice"\n`);
    const added = await runCmi(['users', 'yubi-keys', 'add', 'alice', 'cccjgjgkhcbbirdrfdnlnghhfgrtnnlgedjlftrbdeut', '--label', 'desk key'], env);
    const row = await t.database.db.selectFrom('user_yubi_keys').select(['id', 'user_id', 'key_id', 'label']).executeTakeFirstOrThrow();
    assert.deepEqual([Number(row.user_id), row.key_id, row.label], [t.alice.id, 'cccjgjgkhcbb', 'desk key']);
    succeeded(added, `Recorded YubiKey cccjgjgkhcbb (key ${row.id}) for user ${t.alice.id} "alice"\n`);
    const refused = await runCmi(['users', 'yubi-keys', 'add', 'alice', '123456'], env);
    assert.deepEqual([refused.code, refused.stdout, refused.stderr], [1, '', 'cmi: otp must be a YubiKey OTP: 44 modhex characters (touch the key)\n']);
    succeeded(await runCmi(['users', 'yubi-keys', 'list', 'alice'], env), [
      'ID  PUBLIC ID     LABEL     CREATED',
      `${String(row.id).padEnd(2)}  cccjgjgkhcbb  desk key  2026-11-20T10:00:00+00:00`,
      `1 YubiKeys of user ${t.alice.id} "alice"`,
      '',
    ].join('\n'));
    const json = await t.app.inject({ url: `/users/${t.alice.id}/yubi_keys.json?per_page=1000`, headers: { authorization: t.adminAuth } });
    succeeded(await runCmi(['users', 'yubi-keys', 'list', 'alice', '--json'], env), `${json.body}\n`);
    succeeded(await runCmi(['users', 'yubi-keys', 'remove', 'alice', String(row.id)], env), `Forgot YubiKey ${row.id} of user ${t.alice.id} "alice"\n`);
    assert.equal((await t.database.db.selectFrom('user_yubi_keys').select('id').execute()).length, 0);
    const bad = await runCmi(['users', 'yubi-keys', 'remove', 'alice', 'x'], env);
    assert.deepEqual([bad.code, bad.stderr], [2, 'cmi: the key is named by its id, a positive integer (got "x")\n']);
  });
});
