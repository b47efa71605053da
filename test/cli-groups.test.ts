import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { adminCliEnv, type Finished, runCmi } from './support/cli.js';

/**
 * `cmi groups ...` and `cmi users ls`'s filters (docs/cli.md#user-groups) against a real cmi on a
 * random port, as child processes; the tests build on each other in order.
 */
describe('cmi groups, and cmi users ls filtered', () => {
  let t: TestApp;
  let url: string;
  let home: string;
  let env: Record<string, string>;

  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
    url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-groups-'));
    env = adminCliEnv(home, url, ADMIN);
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const cmi = (args: string[]) => runCmi(args, env);
  const api = (method: 'GET' | 'PUT', path: string, body?: unknown) =>
    t.app.inject({ method, url: path, headers: { authorization: t.adminAuth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });

  function succeeded(res: Finished, stdout: string): void {
    assert.deepEqual([res.code, res.stderr, res.stdout], [0, '', stdout]);
  }
  function failed(res: Finished, code: number, stderr: string | RegExp): void {
    assert.equal(res.stdout, '');
    if (typeof stderr === 'string') assert.equal(res.stderr, stderr);
    else assert.match(res.stderr, stderr);
    assert.equal(res.code, code);
  }

  it('groups add, ls, show, edit: what each prints and what the server then holds', async () => {
    succeeded(await cmi(['groups', 'add', '--label', 'Resellers', '--roles', '2']), 'Created user group 1 "Resellers" (resellers)\n');
    succeeded(await cmi(['groups', 'add', '--label', 'Ops team', '--identifier', 'ops']), 'Created user group 2 "Ops team" (ops)\n');
    succeeded(await cmi(['groups', 'ls']),
      'ID  LABEL      IDENTIFIER  ROLES  BUCKET\n' +
      '1   Resellers  resellers   user   -\n' +
      '2   Ops team   ops         -      -\n' +
      '2 of 2 user groups (page 1 of 1)\n');
    for (const format of ['json', 'xml']) {
      const body = (await api('GET', `/user_groups.${format}`)).body;
      succeeded(await cmi(['groups', 'ls', `--${format}`]), `${body.replace(/\n$/, '')}\n`);
    }
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user_group_id: 1 })).statusCode, 204);
    succeeded(await cmi(['groups', 'show', 'resellers']),
      'id:         1\nlabel:      Resellers\nidentifier: resellers\nroles:      user\nbucket:     -\nusers:      1\n' +
      'created_at: 2026-11-20T10:00:00+00:00\nupdated_at: 2026-11-20T10:00:00+00:00\n');
    succeeded(await cmi(['groups', 'edit', 'Ops team', '--label', 'Operations', '--roles', '1,2']), 'Updated user group 2 "Operations" (ops)\n');
    const edited = (await api('GET', '/user_groups/2.json')).json<{ user_group: { label: string; roles: Array<{ role: { id: number } }> } }>().user_group;
    assert.deepEqual([edited.label, edited.roles.map(({ role }) => role.id)], ['Operations', [1, 2]]);
    succeeded(await cmi(['groups', 'show', '2', '--json']), (await api('GET', '/user_groups/2.json')).body + '\n');
  });

  it('users ls --q --status --role --group narrow the table', async () => {
    succeeded(await cmi(['users', 'ls', '--group', 'resellers']),
      'ID  LOGIN  EMAIL              ROLE  STATUS\n' +
      '2   alice  alice@example.com  user  active\n' +
      '1 of 1 users (page 1 of 1)\n');
    succeeded(await cmi(['users', 'ls', '--q', 'ADMIN', '--status', 'active', '--role', '1']),
      'ID  LOGIN  EMAIL              ROLE   STATUS\n' +
      '1   admin  admin@example.com  admin  active\n' +
      '1 of 1 users (page 1 of 1)\n');
    succeeded(await cmi(['users', 'ls', '--group', '2', '--all']), 'ID  LOGIN  EMAIL  ROLE  STATUS\n0 users\n');
    failed(await cmi(['users', 'ls', '--status', 'gone']), 2, /^error: option '--status <status>' argument 'gone' is invalid\. Allowed choices are active, suspended, deleted\.\n/);
    failed(await cmi(['users', 'ls', '--group', 'nobody']), 2, 'cmi: no user group "nobody" (give an id, an identifier or a label)\n');
  });

  it('groups rm: refused while users belong to the group (exit 1), done once none do', async () => {
    failed(await cmi(['groups', 'rm', 'resellers']), 1, 'cmi: A user group that users belong to cannot be deleted\n');
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user_group_id: null })).statusCode, 204);
    succeeded(await cmi(['groups', 'rm', 'resellers']), 'Deleted user group 1 "Resellers" (resellers)\n');
    failed(await cmi(['groups', 'show', '1']), 1, 'cmi: Resource not found\n');
    failed(await cmi(['groups', 'edit', '2']), 2, 'cmi: nothing to change: give at least one of the options (cmi help groups edit)\n');
    failed(await cmi(['groups', 'add', '--label', 'x', '--roles', 'nosuch']), 2, 'cmi: no role "nosuch" (give an id, an identifier or a label)\n');
    failed(await cmi(['groups', 'add', '--label', 'x', '--roles', 'admin,']), 2, 'cmi: --roles must be roles separated by commas (got "admin,")\n');
  });

  it('users add --group and users edit --group (by id, identifier or label) and --no-group: what the server then holds', async () => {
    const groupOf = async (login: string) => {
      const user = await t.database.db.selectFrom('users').select('user_group_id').where('login', '=', login).executeTakeFirstOrThrow();
      return user.user_group_id === null ? null : Number(user.user_group_id);
    };
    succeeded(await cmi(['groups', 'add', '--label', 'Night shift']), 'Created user group 3 "Night shift" (night_shift)\n');
    succeeded(await cmi(['users', 'add', '--login', 'kim', '--email', 'kim@example.com', '--password', 'kim-password', '--group', 'ops']), 'Created user 3 "kim" <kim@example.com>\n');
    assert.equal(await groupOf('kim'), 2);
    succeeded(await cmi(['users', 'edit', 'kim', '--group', 'Night shift']), 'Updated user 3 "kim" <kim@example.com>\n');
    assert.equal(await groupOf('kim'), 3);
    succeeded(await cmi(['users', 'edit', 'kim', '--group', '2']), 'Updated user 3 "kim" <kim@example.com>\n');
    assert.equal(await groupOf('kim'), 2);
    succeeded(await cmi(['users', 'edit', 'kim', '--no-group']), 'Updated user 3 "kim" <kim@example.com>\n');
    assert.equal(await groupOf('kim'), null);
    const [unknownId, unknownName, onAdd] = await Promise.all([
      cmi(['users', 'edit', 'kim', '--group', '99']),
      cmi(['users', 'edit', 'kim', '--group', 'nobody']),
      cmi(['users', 'add', '--login', 'lee', '--email', 'lee@example.com', '--password', 'lee-password', '--group', 'nobody']),
    ]);
    failed(unknownId, 1, 'cmi: user_group_id names no user group: 99\n');
    failed(unknownName, 2, 'cmi: no user group "nobody" (give an id, an identifier or a label)\n');
    failed(onAdd, 2, 'cmi: no user group "nobody" (give an id, an identifier or a label)\n');
    assert.equal(await groupOf('kim'), null);
    assert.equal(await t.database.db.selectFrom('users').select('id').where('login', '=', 'lee').executeTakeFirst(), undefined);
  });
});
