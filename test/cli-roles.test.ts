import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PERMISSIONS } from '../src/roles/permissions.js';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { type Finished, runCmi } from './support/cli.js';

const AT = '2026-11-20T10:00:00+00:00';

/**
 * `cmi roles`, `cmi permissions`, `cmi buckets` and `cmi users add|edit --role --bucket` (docs/cli.md#roles-and-permissions,
 * docs/cli.md#billing-buckets) against a real cmi on a random port, as child processes; the tests build on
 * each other in order (each command starts a process).
 */
describe('cmi roles, permissions and buckets', () => {
  let t: TestApp;
  let home: string;
  let env: Record<string, string>;

  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
    const url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-roles-'));
    // Nothing of the developer's own setup: no profile, no database in reach.
    env = {
      XDG_CONFIG_HOME: join(home, 'config'), CMI_PROFILE: '', CMI_API_KEY: '', NO_COLOR: '', DATABASE_URL: `sqlite:${join(home, 'unused.sqlite3')}`,
      CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password,
    };
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const cmi = (...args: string[]) => runCmi(args, env);
  const api = async (path: string) => (await t.app.inject({ url: path, headers: { authorization: t.adminAuth } })).body;

  function succeeded(res: Finished, stdout: string): void {
    assert.equal(res.stderr, '');
    assert.equal(res.stdout, stdout);
    assert.equal(res.code, 0);
  }

  function failed(res: Finished, code: number, stderr: string): void {
    assert.equal(res.stdout, '');
    assert.equal(res.stderr, stderr);
    assert.equal(res.code, code);
  }

  /** What the database holds of a role: its label, identifier and permission ids. */
  async function stored(id: number): Promise<[string, string, number[]] | undefined> {
    const role = await t.database.db.selectFrom('roles').select(['label', 'identifier']).where('id', '=', id).executeTakeFirst();
    if (role === undefined) return undefined;
    const held = await t.database.db.selectFrom('role_permissions').select('permission_id').where('role_id', '=', id).orderBy('permission_id').execute();
    return [role.label, role.identifier, held.map((row) => Number(row.permission_id))];
  }

  it('permissions ls: the whole catalogue in one table; --json and --xml are the API\'s bodies', async () => {
    const width = Math.max(...PERMISSIONS.map(([, identifier]) => identifier.length));
    succeeded(await cmi('permissions', 'ls'),
      `ID  ${'IDENTIFIER'.padEnd(width)}  LABEL\n` +
      PERMISSIONS.map(([id, identifier, label]) => `${String(id).padEnd(2)}  ${identifier.padEnd(width)}  ${label}\n`).join('') +
      `${PERMISSIONS.length} permissions\n`);
    const [json, xml] = await Promise.all([cmi('permissions', 'ls', '--json'), cmi('permissions', 'ls', '--xml')]);
    succeeded(json, `${await api('/permissions.json?per_page=1000')}\n`);
    succeeded(xml, await api('/permissions.xml?per_page=1000'));
  });

  it('roles ls and show: the system roles; --json and --xml are the API\'s bodies', async () => {
    const [ls, json, xml, show] = await Promise.all([cmi('roles', 'ls'), cmi('roles', 'ls', '--json'), cmi('roles', 'show', 'user', '--xml'), cmi('roles', 'show', 'User')]);
    succeeded(ls,
      'ID  IDENTIFIER  LABEL          SYSTEM  USERS  PERMISSIONS\n' +
      `1   admin       Administrator  yes     1      ${PERMISSIONS.length}\n` +
      '2   user        User           yes     1      3\n' +
      '2 of 2 roles (page 1 of 1)\n');
    succeeded(json, `${await api('/roles.json')}\n`);
    succeeded(xml, await api('/roles/2.xml'));
    const created = t.systemRoles.user.created_at;
    succeeded(show,
      'id:                  2\nlabel:               User\nidentifier:          user\nsystem:              yes\nrequires_two_factor: no\nusers_count:         1\n' +
      `created_at:          ${created}\nupdated_at:          ${t.systemRoles.user.updated_at}\n\n` +
      'Permissions (3):\n' +
      '  ID  IDENTIFIER         LABEL\n' +
      '  2   users.read.own     See the own user\n' +
      '  5   users.update.own   Edit the own user\n' +
      '  9   users.api_key.own  Make a new API key for the own user\n');
  });

  it('roles add, edit (--permission, --grant, --revoke, --label), clone, rm: what each prints and what the server then holds', async () => {
    succeeded(await cmi('roles', 'add', '--label', 'Error readers', '--permission', 'infrastructure_errors.read', '--permission', '25'),
      'Created role 3 "error_readers" (Error readers) with 2 permissions\n');
    assert.deepEqual(await stored(3), ['Error readers', 'error_readers', [22, 25]]);
    succeeded(await cmi('roles', 'edit', '3', '--requires-two-factor', 'yes'), 'Updated role 3 "error_readers" (Error readers), 2 permissions\n');
    assert.equal(Number((await t.database.db.selectFrom('roles').select('requires_two_factor').where('id', '=', 3).executeTakeFirstOrThrow()).requires_two_factor), 1);
    succeeded(await cmi('roles', 'edit', '3', '--requires-two-factor', 'no'), 'Updated role 3 "error_readers" (Error readers), 2 permissions\n');
    assert.equal(Number((await t.database.db.selectFrom('roles').select('requires_two_factor').where('id', '=', 3).executeTakeFirstOrThrow()).requires_two_factor), 0);
    succeeded(await cmi('roles', 'edit', 'error readers', '--grant', 'users.read', '--grant', '7', '--revoke', 'infrastructure_errors.delete'),
      'Updated role 3 "error_readers" (Error readers), 3 permissions\n');
    assert.deepEqual(await stored(3), ['Error readers', 'error_readers', [1, 7, 22]]);
    succeeded(await cmi('roles', 'edit', '3', '--label', 'Support', '--identifier', 'support', '--permission', 'users.read', '--permission', 'users.suspend'),
      'Updated role 3 "support" (Support), 2 permissions\n');
    assert.deepEqual(await stored(3), ['Support', 'support', [1, 7]]);
    succeeded(await cmi('roles', 'clone', 'support'), 'Created role 4 "support_copy" (Support (copy)) from role 3 "support" (Support), with its 2 permissions\n');
    assert.deepEqual(await stored(4), ['Support (copy)', 'support_copy', [1, 7]]);
    succeeded(await cmi('roles', 'show', 'support_copy'),
      `id:                  4\nlabel:               Support (copy)\nidentifier:          support_copy\nsystem:              no\nrequires_two_factor: no\nusers_count:         0\ncreated_at:          ${AT}\nupdated_at:          ${AT}\n\n` +
      'Permissions (2):\n  ID  IDENTIFIER     LABEL\n  1   users.read     See any user\n  7   users.suspend  Suspend and activate users\n');
    succeeded(await cmi('roles', 'rm', 'Support (copy)'), 'Deleted role 4 "support_copy" (Support (copy))\n');
    assert.equal(await stored(4), undefined);
    succeeded(await cmi('roles', 'add', '--label', 'Empty'), 'Created role 5 "empty" (Empty) with 0 permissions\n');
    succeeded(await cmi('roles', 'show', 'empty'),
      `id:                  5\nlabel:               Empty\nidentifier:          empty\nsystem:              no\nrequires_two_factor: no\nusers_count:         0\ncreated_at:          ${AT}\nupdated_at:          ${AT}\n\nPermissions (0):\n  none\n`);
  });

  it('roles: usage mistakes exit 2 before any change, the server\'s refusals exit 1 with its words', async () => {
    // Two roles labelled alike: the label names neither.
    succeeded(await cmi('roles', 'add', '--label', 'empty', '--identifier', 'empty_too'), 'Created role 6 "empty_too" (empty) with 0 permissions\n');
    const results = await Promise.all([
      cmi('roles', 'show', 'Empty'),
      cmi('roles', 'show', 'nobody'),
      cmi('roles', 'show', '99'),
      cmi('roles', 'add', '--label', 'X', '--permission', 'users.fly'),
      cmi('roles', 'add'),
      cmi('roles', 'edit', 'support'),
      cmi('roles', 'rm', 'admin'),
      cmi('roles', 'edit', 'admin', '--revoke', 'users.read'),
      cmi('roles', 'add', '--label', 'X', '--permission', '999'),
      runCmi(['roles', 'ls', '--user', ALICE.login], { ...env, CMI_PASSWORD: ALICE.password }),
    ]);
    failed(results[0], 2, 'cmi: 2 roles are labelled "Empty" (ids 5, 6): give the id or the identifier\n');
    failed(results[1], 2, 'cmi: no role "nobody" (give an id, an identifier or a label)\n');
    failed(results[2], 1, 'cmi: Resource not found\n');
    failed(results[3], 2, 'cmi: no permission "users.fly" (give an id or an identifier: cmi permissions ls lists them)\n');
    assert.equal(results[4].code, 2);
    assert.match(results[4].stderr, /^error: required option '--label <label>' not specified\n/);
    failed(results[5], 2, 'cmi: nothing to change: give at least one of the options (cmi help roles edit)\n');
    failed(results[6], 1, 'cmi: A system role cannot be deleted\n');
    failed(results[7], 1, 'cmi: permission_ids of the admin role are every permission\n');
    failed(results[8], 1, 'cmi: permission_ids names no permission: 999\n');
    failed(results[9], 1, 'cmi: You are not authorized to perform this action (needs roles.read)\n');
    assert.deepEqual((await t.database.db.selectFrom('roles').select('id').orderBy('id').execute()).map((row) => Number(row.id)), [1, 2, 3, 5, 6]);
  });

  it('buckets add, ls, show, edit, rm: what each prints and what the server then holds', async () => {
    succeeded(await cmi('buckets', 'add', '--label', 'Gold'), 'Created bucket 1 "Gold"\n');
    succeeded(await cmi('buckets', 'add', '--label', 'Silver', '--currency-code', 'EUR', '--monthly-price', '12.5', '--show-price', '--allows-kms'), 'Created bucket 2 "Silver"\n');
    const [ls, page, json, xml] = await Promise.all([
      cmi('buckets', 'ls'), cmi('buckets', 'ls', '--per-page', '1', '--page', '2'), cmi('buckets', 'ls', '--all', '--json'), cmi('buckets', 'show', 'silver', '--xml'),
    ]);
    succeeded(ls,
      'ID  LABEL   CURRENCY  MONTHLY PRICE  SHOW PRICE  KMS  MAK  OWN\n' +
      '1   Gold    USD       0              no          no   no   no\n' +
      '2   Silver  EUR       12.5           yes         yes  no   no\n' +
      '2 of 2 buckets (page 1 of 1)\n');
    succeeded(page,
      'ID  LABEL   CURRENCY  MONTHLY PRICE  SHOW PRICE  KMS  MAK  OWN\n' +
      '2   Silver  EUR       12.5           yes         yes  no   no\n' +
      '1 of 2 buckets (page 2 of 2)\n');
    succeeded(json, `${await api('/billing/buckets.json')}\n`);
    succeeded(xml, await api('/billing/buckets/2.xml'));

    t.time.advance(60);
    succeeded(await cmi('buckets', 'edit', 'Silver', '--label', 'Silver+', '--monthly-price', '15', '--no-show-price', '--allows-own'), 'Updated bucket 2 "Silver+"\n');
    succeeded(await cmi('buckets', 'show', '2'),
      'id:            2\nlabel:         Silver+\ncurrency_code: EUR\nmonthly_price: 15\nshow_price:    no\nallows_kms:    yes\nallows_mak:    no\nallows_own:    yes\n' +
      `created_at:    ${AT}\nupdated_at:    2026-11-20T10:01:00+00:00\n`);
    const [badPrice, badCurrency, nothing, missing] = await Promise.all([
      cmi('buckets', 'edit', 'Gold', '--monthly-price', 'free'), cmi('buckets', 'add', '--label', 'Bronze', '--currency-code', 'eur'), cmi('buckets', 'edit', 'Gold'), cmi('buckets', 'rm', 'Platinum'),
    ]);
    failed(badPrice, 1, 'cmi: monthly_price must be a number of at least 0\n');
    failed(badCurrency, 1, 'cmi: currency_code must be three capital letters (ISO 4217)\n');
    failed(nothing, 2, 'cmi: nothing to change: give at least one of the options (cmi help buckets edit)\n');
    failed(missing, 2, 'cmi: no bucket "Platinum" (give an id or a label)\n');
    succeeded(await cmi('buckets', 'rm', 'gold'), 'Deleted bucket 1 "Gold"\n');
    const rows = await t.database.db.selectFrom('billing_buckets').selectAll().orderBy('id').execute();
    assert.deepEqual(rows.map((r) => [Number(r.id), r.label, r.currency_code, Number(r.monthly_price), Number(r.show_price), Number(r.allows_kms), Number(r.allows_mak), Number(r.allows_own)]),
      [[2, 'Silver+', 'EUR', 15, 0, 1, 0, 1]]);
  });

  it('users add and edit --role (repeatable, by id, identifier or label) and --bucket (--no-bucket); a role or bucket in use stays', async () => {
    /** What the database holds of a user: its role ids and bucket. */
    const held = async (login: string) => {
      const user = await t.database.db.selectFrom('users').select(['id', 'bucket_id']).where('login', '=', login).executeTakeFirstOrThrow();
      const roles = await t.database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', user.id).orderBy('role_id').execute();
      return [roles.map((r) => Number(r.role_id)), user.bucket_id === null ? null : Number(user.bucket_id)];
    };
    succeeded(await cmi('users', 'add', '--login', 'kim', '--email', 'kim@example.com', '--password', 'kim-password', '--role', 'user', '--role', 'Support', '--bucket', 'silver+'),
      'Created user 3 "kim" <kim@example.com>\n');
    assert.deepEqual(await held('kim'), [[2, 3], 2]);
    succeeded(await cmi('users', 'add', '--login', 'lee', '--email', 'lee@example.com', '--password', 'lee-password', '--role', '1', '--bucket', '2'),
      'Created administrator 4 "lee" <lee@example.com>\n');
    assert.deepEqual(await held('lee'), [[1], 2]);
    succeeded(await cmi('users', 'ls'),
      'ID  LOGIN  EMAIL              ROLE          STATUS\n' +
      '1   admin  admin@example.com  admin         active\n' +
      '2   alice  alice@example.com  user          active\n' +
      '3   kim    kim@example.com    user,support  active\n' +
      '4   lee    lee@example.com    admin         active\n' +
      '4 of 4 users (page 1 of 1)\n');
    const [inUse, bucketInUse] = await Promise.all([cmi('roles', 'rm', 'support'), cmi('buckets', 'rm', '2')]);
    failed(inUse, 1, 'cmi: A role that users hold cannot be deleted\n');
    failed(bucketInUse, 1, 'cmi: A bucket that users belong to cannot be deleted\n');

    succeeded(await cmi('users', 'edit', 'kim', '--role', 'support', '--no-bucket'), 'Updated user 3 "kim" <kim@example.com>\n');
    assert.deepEqual(await held('kim'), [[3], null]);
    succeeded(await cmi('users', 'edit', 'lee', '--bucket', 'Silver+'), 'Updated user 4 "lee" <lee@example.com>\n');
    const shown = await cmi('users', 'show', 'kim');
    assert.match(shown.stdout, /\nrole: {16}support\n[^]*\nbucket_id: {11}-\nuser_group_id: {7}-\ntotp_enabled: {8}false\nregistered_yubikey: {2}false\n$/);

    const results = await Promise.all([
      cmi('users', 'edit', 'kim', '--role', 'nobody'),
      cmi('users', 'edit', 'kim', '--role', '99', '--bucket', '99'),
      cmi('users', 'add', '--login', 'x', '--email', 'x@example.com', '--password', 'x-password', '--role', 'user', '--admin'),
      cmi('users', 'edit', 'kim', '--role', 'Empty'),
      cmi('users', 'edit', 'kim', '--bucket', 'Gold'),
    ]);
    failed(results[0], 2, 'cmi: no role "nobody" (give an id, an identifier or a label)\n');
    failed(results[1], 1, 'cmi: role_ids names no role: 99\ncmi: bucket_id names no bucket: 99\n');
    assert.equal(results[2].code, 2);
    assert.match(results[2].stderr, /^error: option '--role <role>' cannot be used with option '--admin'\n/);
    failed(results[3], 2, 'cmi: 2 roles are labelled "Empty" (ids 5, 6): give the id or the identifier\n');
    failed(results[4], 2, 'cmi: no bucket "Gold" (give an id or a label)\n');
    assert.deepEqual(await held('kim'), [[3], null]);
  });
});
