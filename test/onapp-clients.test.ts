import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';
import { runProgram } from './support/cli.js';

// The OnApp clients cmi must serve unchanged (docs/clients.md), each replayed by a small program that
// makes the requests the client makes and decodes the answers as it does: test/clients/onapp-go (the
// Go SDK's requests and typed structs, standard library only) and test/clients/onapp-php (the PHP
// wrapper's requests and parsing, PHP's own streams only). Neither fetches anything. CI installs go
// and php (.ci/run); without them the test says so and skips.

const present = (command: string, args: string[]) => spawnSync(command, args, { stdio: 'ignore' }).error === undefined;
const hasGo = present('go', ['version']);
const hasPhp = present('php', ['--version']);

const CLIENTS = fileURLToPath(new URL('./clients/', import.meta.url));
const AT = '2026-11-20T10:00:00+00:00';

/** The Go toolchain's caches in a directory of their own: CI runs as root, offline, with no GOPATH. */
function goEnvironment(): NodeJS.ProcessEnv {
  const cache = join(tmpdir(), 'cmi-onapp-go-cache');
  mkdirSync(cache, { recursive: true });
  return {
    ...process.env,
    GOCACHE: join(cache, 'build'),
    GOPATH: join(cache, 'path'),
    GOMODCACHE: join(cache, 'path', 'pkg', 'mod'),
    GOPROXY: 'off',
    GOFLAGS: '-mod=mod',
    GOWORK: 'off',
    GOTOOLCHAIN: 'local',
    CGO_ENABLED: '0',
  };
}

describe('the OnApp clients against cmi over a real socket', () => {
  let t: TestApp;
  let base: string;
  let apiKey: string;
  beforeEach(async () => {
    t = await createTestApp();
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
    const made = await t.app.inject({ method: 'POST', url: '/users/1/make_new_api_key.json', headers: { authorization: t.adminAuth } });
    apiKey = (JSON.parse(made.body) as { user: { api_key: string } }).user.api_key;
  });
  afterEach(() => t.close());

  /** Permission `id` as the SDK's Permission struct marshals it (id, identifier, created_at, updated_at, label). */
  async function goPermission(id: number): Promise<string> {
    const p = await t.database.db.selectFrom('permissions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const wire = (stored: string) => `${stored.slice(0, 19)}+00:00`;
    return `{"permission":{"id":${id},"identifier":"${p.identifier}","created_at":"${wire(p.created_at)}","updated_at":"${wire(p.updated_at)}","label":"${p.label}"}}`;
  }

  async function rowCounts(): Promise<number[]> {
    const count = async (table: 'users' | 'roles' | 'billing_buckets') =>
      Number((await t.database.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    return [await count('users'), await count('roles'), await count('billing_buckets')];
  }

  it('the Go SDK: version, permissions, roles, buckets and users, created, edited, read, listed and deleted', { skip: !hasGo && 'go is not installed' }, async () => {
    // User groups are tested once cmi has them (docs/clients.md).
    const groups = (await t.app.inject({ method: 'GET', url: '/user_groups.json', headers: { authorization: t.adminAuth } })).statusCode === 200;
    const run = await runProgram('go', ['run', '.', `${base}/`, 'admin', apiKey, ...(groups ? ['groups'] : [])], { cwd: join(CLIENTS, 'onapp-go'), env: goEnvironment() });
    assert.equal(run.stderr, '');
    const [users, rolesRead, twentyFirst] = [await goPermission(1), await goPermission(10), await goPermission(21)];
    // The catalogue may grow (its ids are permanent): page 2 of 20 is read from what is stored.
    const catalogue = Number((await t.database.db.selectFrom('permissions').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const role = (label: string, permissions: string[]) =>
      `{"id":3,"label":"${label}","identifier":"go_readers","created_at":"${AT}","updated_at":"${AT}","system":false,"permissions":[${permissions.join(',')}]}`;
    const expected = [
      'Version: 200 {"version":"6.7"}',
      `Permissions.List page 2: 200 links=20/2/${catalogue} n=${Math.min(20, catalogue - 20)} first=${twentyFirst.slice('{"permission":'.length, -1)}`,
      'Roles.List: 200 links=1/1/2 n=1 first=admin',
      `Roles.Create: 201 ${role('Go readers', [users, rolesRead])}`,
      'Roles.Edit: 204',
      `Roles.Get: 200 ${role('Go user readers', [users])}`,
      `Buckets.Create: 201 {"id":1,"label":"Gold","created_at":"${AT}","updated_at":"${AT}","currency_code":"EUR","show_price":false,"allows_mak":false,"allows_kms":true,"allows_own":false,"monthly_price":12.5}`,
      'Buckets.Edit: 204',
      `Buckets.Get: 200 {"id":1,"label":"Platinum","created_at":"${AT}","updated_at":"${AT}","currency_code":"USD","show_price":false,"allows_mak":true,"allows_kms":false,"allows_own":false,"monthly_price":99.99}`,
      'Buckets.List: 200 links=25/1/1 n=1 first=Platinum',
      'Users.Create: 201 id=3 login=gopher status=active first_name=Go last_name=Pher bucket_id=1 user_group_id=0 role_ids=[2,3]',
      'Users.Edit: 204',
      `Users.Get: 200 {"activated_at":"${AT}","bucket_id":1,"created_at":"${AT}","email":"gopher@example.com","first_name":"Gordon","id":3,"infoboxes":{"display_infoboxes":false},"last_name":"Gopher","login":"gopher","password_changed_at":"${AT}","registered_yubikey":false,"roles":[{"role":${role('Go user readers', [users])}}],"status":"active","supplied":false,"updated_at":"${AT}","use_gravatar":false}`,
      `Users.MakeNewAPIKey: 200 api_key=${apiKey.length} characters`,
      'Version with the new key: 200',
      'Users.List: 200 links=10/1/3 admin,alice,gopher',
      'Roles.Delete held: 422 errors={"base":["A role that users hold cannot be deleted"]}',
      'Users.Delete: 204',
      'Users.Get deleted: 200 id=3 login=gopher status=deleted first_name=Gordon last_name=Gopher bucket_id=1 user_group_id=0 role_ids=[3]',
      'Users.Delete again: 204',
      'Users.Get removed: 404 errors={"base":["Resource not found"]}',
      'Roles.Delete: 204',
      'Buckets.Delete: 204',
      'Roles.Delete system: 422 errors={"base":["A system role cannot be deleted"]}',
      ...(groups ? [
        'UserGroups.Create: 201 label=Go group',
        'UserGroups.Edit: 204',
        'UserGroups.Get: 200 same id=true label=Go gophers',
        'UserGroups.List: 200 found=true',
        'Users.Create in group: 201 in group=true',
        'Users.Edit in group: 204',
        'Users.Get in group: 200 first_name=Grouped in group=true',
        'Users.Delete in group: 204',
        'Users.Delete in group: 204',
        'UserGroups.Delete: 204',
      ] : []),
      'Version wrong key: 401 errors={"base":["Access denied"]}',
    ];
    assert.equal(run.stdout, expected.map((line) => `${line}\n`).join(''));
    assert.equal(run.code, 0);
    // Everything it made is gone again; the administrator and alice remain.
    assert.deepEqual(await rowCounts(), [2, 2, 0]);
  });

  it('the PHP wrapper: version, permissions, roles, buckets and users, saved, loaded, listed and deleted', { skip: !hasPhp && 'php is not installed' }, async () => {
    const run = await runProgram('php', [join(CLIENTS, 'onapp-php', 'check.php'), base, 'admin', apiKey, 'alice', 'alice-password']);
    assert.equal(run.stderr, '');
    assert.equal(run.stdout, `auth: 200 version=6.7
Role_Permission getList: 200 count=25 first=users.read
Role save (create): 201 id=3 identifier=php_readers system=false users_count=0 permissions=users.read,roles.read
Role save (edit): 204
Role load: 200 label=PHP user readers identifier=php_readers permissions=users.read
Role save (edit system role): 204
Role getList: 200 labels=Administrator,Customer,PHP user readers
BillingBucket save (create): 201 id=1 currency_code=USD monthly_price=7 show_price=true
BillingBucket save (edit): 204
BillingBucket getList: 200 label=PHP bucket 2 monthly_price=7.5
User save (create): 201 id=3 login=elephant status=active bucket_id=1 role_ids=[2,3]
User save (edit): 204
User load: 200 first_name=Elle time_zone=null bucket_id=1 role_ids=[2,3]
User save (edit roles): 204
User load: 200 bucket_id=1 role_ids=[2]
User make_new_api_key: 200 api_key=${apiKey.length} characters
auth (new key): 200
User getList: 200 logins=admin,alice,elephant
auth (user, password): 200
User getList (user): 200 login=alice
User save (own record): 204
User save (own roles): 403 {"errors":{"base":["You are not authorized to perform this action (needs users.update)"]}}
User load (user): 200 time_zone=Europe/Paris
User delete(force): 204 []
User load: 200 status=deleted
User delete(force) again: 204
User load: 404 {"errors":{"base":["Resource not found"]}}
Role delete: 204
BillingBucket delete: 204
Role delete (admin): 422 {"errors":{"base":["A system role cannot be deleted"]}}
auth (wrong key): 401 {"base":["Access denied"]}
`);
    assert.equal(run.code, 0);
    const stored = await t.database.db.selectFrom('users').select(['login', 'time_zone']).orderBy('id').execute();
    assert.deepEqual(stored, [{ login: 'admin', time_zone: 'UTC' }, { login: 'alice', time_zone: 'Europe/Paris' }]);
    const customer = await t.database.db.selectFrom('roles').select(['label', 'identifier']).where('id', '=', 2).executeTakeFirstOrThrow();
    assert.deepEqual(customer, { label: 'Customer', identifier: 'user' });
    assert.deepEqual(await rowCounts(), [2, 2, 0]);
  });
});
