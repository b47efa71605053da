import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { type Finished, runCmi } from './support/cli.js';
import { eventually } from './support/eventually.js';
import { OLD_SPELLINGS } from '../src/cli/old-spellings.js';

/**
 * The remote commands of `cmi` (docs/cli.md) against a real cmi on a random port, as child processes;
 * each command starts a process, so the tests build on each other in order. The terminal's output is
 * checked in a pseudo-terminal (`script`, util-linux) and piped.
 */
describe('cmi remote commands', () => {
  let t: TestApp;
  let url: string;
  let home: string;
  let env: Record<string, string>;
  const AS_ADMIN = () => ({ ...env, CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password });

  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
    url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-remote-'));
    // Nothing of the developer's own setup: no profile, no server, no database in reach.
    env = { XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: '', CMI_USER: '', CMI_PASSWORD: '', CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '', DATABASE_URL: `sqlite:${join(home, 'unused.sqlite3')}` };
    // The database the local commands here use, apart from the server's (they create none themselves).
    const migrated = await runCmi(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const cmi = (args: string[], extra: Record<string, string> = {}, stdin?: string) => runCmi(args, { ...env, ...extra }, stdin);

  function succeeded(res: Finished, stdout: string | RegExp): void {
    assert.equal(res.stderr, '');
    assert.equal(res.code, 0);
    if (typeof stdout === 'string') assert.equal(res.stdout, stdout);
    else assert.match(res.stdout, stdout);
  }

  function failed(res: Finished, code: number, stderr: string | RegExp): void {
    assert.equal(res.stdout, '');
    if (typeof stderr === 'string') assert.equal(res.stderr, stderr);
    else assert.match(res.stderr, stderr);
    assert.equal(res.code, code);
  }

  it('without a server or credentials: exit 2 and what to give', async () => {
    failed(await cmi(['users', 'ls']), 2, 'cmi: no server: give --url URL (or CMI_URL), --profile NAME, or save one with cmi login\n');
    failed(await cmi(['users', 'ls', '--url', url, '--user', 'admin']), 2, 'cmi: no password: give --password-stdin, CMI_PASSWORD or CMI_API_KEY, or save a profile with cmi login\n');
    failed(await cmi(['users', 'ls', '--bogus']), 2, /^error: unknown option '--bogus'\n/);
    // 192.0.2.1 (TEST-NET-1) is never a cmi: the warning, then refused or timed out as the network has it; loopback
    // (every other test here) warns of nothing.
    failed(await cmi(['version', '--url', 'http://192.0.2.1:8080', '--timeout', '0.3'], { CMI_USER: 'admin', CMI_PASSWORD: 'pw' }), 3,
      /^cmi: warning: 192\.0\.2\.1:8080 is reached over plain http: the password or API key crosses the network readable; use https:\/\/\ncmi: (cannot reach|no answer from) [^\n]*\n$/);
    failed(await cmi(['users', 'ls', '--url', 'http://admin:Secret-1234@127.0.0.1:9'], { CMI_USER: 'admin', CMI_PASSWORD: 'pw' }), 2,
      'cmi: --url must not hold credentials (user:password@host): give --user, and the password with --password-stdin or CMI_PASSWORD\n');
    failed(await cmi(['users', 'ls', '--url', url, '--page', 'x'], { CMI_USER: 'admin', CMI_PASSWORD: 'pw' }), 2, 'cmi: --page must be a positive integer (got "x")\n');
  });

  it('version, with the flags before the command or after it, the password on stdin; --json and --xml', async () => {
    succeeded(await cmi(['--url', url, '--user', 'admin', '--password-stdin', 'version'], {}, `${ADMIN.password}\n`), '6.7\n');
    succeeded(await cmi(['version', '--url', url, '--user', 'admin', '--password-stdin', '--json'], {}, ADMIN.password), '{"version":"6.7"}\n');
    succeeded(await cmi(['version', '--xml'], AS_ADMIN()), '<?xml version="1.0" encoding="UTF-8"?>\n<cmi>\n  <version>6.7</version>\n</cmi>\n');
  });

  it('the API refusing is exit 1 with its message; no server answering is exit 3', async () => {
    failed(await cmi(['version'], { ...AS_ADMIN(), CMI_PASSWORD: 'wrong' }), 1, 'cmi: Access denied\n');
    failed(await cmi(['users', 'show', '999'], AS_ADMIN()), 1, 'cmi: Resource not found\n');
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    failed(await cmi(['version', '--url', `http://127.0.0.1:${port}`], AS_ADMIN()), 3, `cmi: cannot reach http://127.0.0.1:${port}: ECONNREFUSED\n`);
  });

  it('cmi login saves a 0600 profile with the URL, login and a new named API key, never the password; later commands need nothing', async () => {
    const res = await cmi(['login', '--url', url, '--user', 'admin', '--password-stdin'], {}, ADMIN.password);
    const path = join(home, 'config', 'cmi', 'config.json');
    succeeded(res, `Saved profile "default" (admin at ${url}) in ${path}; a new API key 1 "cmi on ${hostname()}" was made for it (the user's other keys go on working)\n`);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const saved = JSON.parse(readFileSync(path, 'utf8')) as { default: string; profiles: Record<string, { url: string; login: string; api_key: string }> };
    assert.deepEqual(Object.keys(saved.profiles.default!), ['url', 'login', 'api_key']);
    assert.deepEqual([saved.default, saved.profiles.default!.url, saved.profiles.default!.login], ['default', url, 'admin']);
    assert.doesNotMatch(readFileSync(path, 'utf8'), new RegExp(ADMIN.password));
    succeeded(await cmi(['version']), '6.7\n');
    // A second installation under its own name, with a key given rather than made.
    const key = saved.profiles.default!.api_key;
    succeeded(await cmi(['login', '--url', url, '--user', 'admin', '--profile', 'other'], { CMI_API_KEY: key }), `Saved profile "other" (admin at ${url}) in ${path}\n`);
    succeeded(await cmi(['version', '--profile', 'other']), '6.7\n');
    failed(await cmi(['version', '--profile', 'nope']), 2, 'cmi: no profile "nope": save one with cmi login --profile nope\n');
    // Logging in again, from another profile, adds a key: the first profile's key goes on working.
    const again = await cmi(['login', '--url', url, '--user', 'admin', '--password-stdin', '--profile', 'third'], {}, ADMIN.password);
    succeeded(again, `Saved profile "third" (admin at ${url}) in ${path}; a new API key 2 "cmi on ${hostname()}" was made for it (the user's other keys go on working)\n`);
    succeeded(await cmi(['version']), '6.7\n');
    succeeded(await cmi(['version', '--profile', 'third']), '6.7\n');
    const rows = await t.database.db.selectFrom('user_api_keys').select(['id', 'user_id', 'description', 'is_default']).orderBy('id').execute();
    assert.deepEqual(rows.map((row) => [Number(row.id), Number(row.user_id), row.description, Number(row.is_default)]), [[1, 1, `cmi on ${hostname()}`, 0], [2, 1, `cmi on ${hostname()}`, 0]]);
  });

  it('users api-keys ls, add, revoke: what each prints; a revoked key is refused', async () => {
    const host = `cmi on ${hostname()}`;
    const at = '2026-11-20T10:00:00+00:00';
    // Both keys were used (by the commands before) at the test clock's time.
    const rows = [['ID', 'DESCRIPTION', 'DEFAULT', 'CREATED', 'LAST USED'], ['1', host, '', at, at], ['2', host, '', at, at]];
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
    const lines = rows.map((row) => row.map((value, column) => (column === row.length - 1 ? value : value.padEnd(widths[column]!))).join('  '));
    // Uses are written a moment after the request, later on a loaded machine: wait until both are.
    await eventually(async () => {
      const used = await t.database.db.selectFrom('user_api_keys').select('last_used_at').where('user_id', '=', 1).execute();
      assert.ok(used.length === 2 && used.every((row) => row.last_used_at !== null), 'both keys\' use written');
    }, 10_000);
    succeeded(await cmi(['users', 'api-keys', 'ls', 'admin']), `${lines.join('\n')}\n2 API keys of user 1 "admin"\n`);
    const added = await cmi(['users', 'api-keys', 'add', 'alice', '--description', 'backup job']);
    assert.equal(added.stderr, '');
    const key = /^New API key 3 "backup job" for user 2 "alice" \(shown once\):\n([0-9a-f]{64})\n$/.exec(added.stdout)?.[1];
    assert.ok(key, added.stdout);
    const aliceWith = (apiKey: string) => ({ CMI_URL: url, CMI_USER: ALICE.login, CMI_API_KEY: apiKey, CMI_PROFILE: '' });
    succeeded(await cmi(['version'], aliceWith(key)), '6.7\n');
    // Its use is written a moment after the request (docs/security.md#api-keys).
    const json = await eventually(async () => {
      const body = (await t.app.inject({ url: '/users/2/user_api_keys.json', headers: { authorization: t.adminAuth } })).body;
      assert.match(body, /"last_used_at":"2026-11-20T10:00:00\+00:00"/, 'the use is written');
      return body;
    });
    succeeded(await cmi(['users', 'api-keys', 'ls', 'alice', '--json']), `${json}\n`);
    succeeded(await cmi(['users', 'api-keys', 'revoke', 'alice', '3']), 'Revoked API key 3 of user 2 "alice"\n');
    failed(await cmi(['version'], aliceWith(key)), 1, 'cmi: Access denied\n');
    failed(await cmi(['users', 'api-keys', 'revoke', 'alice', '3']), 1, 'cmi: Resource not found\n');
    failed(await cmi(['users', 'api-keys', 'revoke', 'alice', 'x']), 2, 'cmi: the key is named by its id, a positive integer (got "x")\n');
    failed(await cmi(['users', 'api-keys', 'add', 'alice', '--description', 'x'.repeat(256)]), 1, 'cmi: description is too long (maximum is 255 characters)\n');
  });

  it('cmi login against a server without named keys (404 there) makes the user\'s one key anew instead', async () => {
    // An older cmi: this one, behind a proxy that knows no /user_api_keys.
    const older = createServer((req, res) => {
      if (req.url?.includes('/user_api_keys')) {
        res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end('{"errors":{"base":["Resource not found"]}}');
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'connection').map(([name, value]) => [name, String(value)]));
        void fetch(`${url}${req.url}`, { method: req.method, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined }).then(async (answer) => {
          res.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => name !== 'content-encoding' && name !== 'transfer-encoding' && name !== 'connection')));
          res.end(Buffer.from(await answer.arrayBuffer()));
        });
      });
    });
    await new Promise<void>((done) => older.listen(0, '127.0.0.1', done));
    const olderUrl = `http://127.0.0.1:${(older.address() as AddressInfo).port}`;
    try {
      const path = join(home, 'config', 'cmi', 'config.json');
      const res = await cmi(['login', '--url', olderUrl, '--user', 'admin', '--password-stdin', '--profile', 'older'], {}, ADMIN.password);
      succeeded(res, `Saved profile "older" (admin at ${olderUrl}) in ${path}; a new API key was made for it (the previous key of this user no longer works)\n`);
      succeeded(await cmi(['version', '--profile', 'older']), '6.7\n');
      const rows = await t.database.db.selectFrom('user_api_keys').select(['description', 'is_default']).where('user_id', '=', 1).orderBy('id').execute();
      assert.deepEqual(rows.map((row) => [row.description, Number(row.is_default)]), [[`cmi on ${hostname()}`, 0], [`cmi on ${hostname()}`, 0], ['default', 1]]);
      // The named keys of the other profiles go on working.
      succeeded(await cmi(['version']), '6.7\n');
    } finally {
      older.closeAllConnections();
      await new Promise((done) => older.close(done));
    }
  });

  it('users ls: an aligned table, piped without colour; --json and --xml are the API\'s bodies', async () => {
    succeeded(await cmi(['users', 'ls']),
      'ID  LOGIN  EMAIL              ROLE   STATUS\n' +
      '1   admin  admin@example.com  admin  active\n' +
      '2   alice  alice@example.com  user   active\n' +
      '2 of 2 users (page 1 of 1)\n');
    for (const format of ['json', 'xml']) {
      const body = (await t.app.inject({ url: `/users.${format}`, headers: { authorization: t.adminAuth } })).body;
      succeeded(await cmi(['users', 'ls', `--${format}`]), `${body.replace(/\n$/, '')}\n`);
    }
    succeeded(await cmi(['users', 'ls', '--per-page', '1', '--page', '2']), /^ID {2}LOGIN {2}EMAIL {14}ROLE {2}STATUS\n2 {3}alice {2}alice@example\.com {2}user {2}active\n1 of 2 users \(page 2 of 2\)\n$/);
  });

  it('users add, show, edit, suspend, activate, api-key, rm: what each prints and what the server then holds', async () => {
    succeeded(await cmi(['users', 'add', '--login', 'grace', '--email', 'grace@example.com', '--password', 'grace-password', '--first-name', 'Grace', '--admin']),
      'Created administrator 3 "grace" <grace@example.com>\n');
    succeeded(await cmi(['users', 'edit', 'grace', '--last-name', 'Hopper', '--time-zone', 'Europe/London']), 'Updated user 3 "grace" <grace@example.com>\n');
    succeeded(await cmi(['users', 'show', 'grace']),
      'id:                  3\nlogin:               grace\nemail:               grace@example.com\nfirst_name:          Grace\n' +
      'last_name:           Hopper\nstatus:              active\nrole:                admin\ntime_zone:           Europe/London\nlocale:              -\n' +
      'created_at:          2026-11-20T10:00:00+00:00\nupdated_at:          2026-11-20T10:00:00+00:00\nactivated_at:        2026-11-20T10:00:00+00:00\n' +
      'suspend_at:          -\ndeleted_at:          -\npassword_changed_at: 2026-11-20T10:00:00+00:00\nbucket_id:           -\nuser_group_id:       -\ntotp_enabled:        false\nregistered_yubikey:  false\n');
    succeeded(await cmi(['users', 'suspend', '3']), 'Suspended user 3 "grace" <grace@example.com>\n');
    succeeded(await cmi(['users', 'activate', 'grace@example.com']), 'Activated user 3 "grace" <grace@example.com>\n');
    const keyed = await cmi(['users', 'api-key', 'grace']);
    succeeded(keyed, /^New API key for 3 "grace" <grace@example\.com> \(shown once; the old one no longer works\):\n\S{20,}\n$/);
    const key = keyed.stdout.trim().split('\n')[1]!;
    succeeded(await cmi(['version', '--url', url, '--user', 'grace'], { CMI_API_KEY: key }), '6.7\n');
    succeeded(await cmi(['users', 'rm', 'grace']), 'Marked user 3 "grace" <grace@example.com> deleted; its access has ended (rm again to remove the record)\n');
    succeeded(await cmi(['users', 'rm', '3']), 'Removed user 3 "grace" <grace@example.com>\n');
    failed(await cmi(['users', 'show', 'grace']), 2, 'cmi: no user "grace" (give an id, a login or an email)\n');
    failed(await cmi(['users', 'add', '--login', 'admin', '--email', 'x@example.com', '--password', 'long-enough']), 1, 'cmi: login has already been taken\n');
  });

  it('users import creates in bulk, skips existing logins (also on a rerun), reports failures with reasons and exits 1; export writes CSV', async () => {
    const csv = join(home, 'staff.csv');
    writeFileSync(csv, 'login,email,password,first_name,role\r\nbob,bob@example.com,bob-password,Bob,user\r\nalice,alice2@example.com,alice-password,,\r\n' +
      'carol,carol@example.com,short,Carol,\r\ndave,dave@example.com,dave-password,"Dave, Jr.",admin\r\n' +
      'erin,erin@example.com,erin-password,Erin,user admin\r\nfrank,frank@example.com,frank-password,,user nosuch\r\n');
    const first = await cmi(['users', 'import', csv, '--concurrency', '2']);
    assert.deepEqual([first.code, first.stderr], [1, '']);
    assert.equal(first.stdout, '3 created, 1 skipped, 2 failed (6 rows)\nskipped line 3: alice: login already exists\nfailed line 4: carol: password is too short (minimum is 8 characters)\n' +
      'failed line 7: frank: no role "nosuch" (cmi roles ls lists them)\n');
    const rerun = await cmi(['users', 'import', csv]);
    assert.equal(rerun.stdout, '0 created, 4 skipped, 2 failed (6 rows)\nskipped line 2: bob: login already exists\nskipped line 3: alice: login already exists\n' +
      'skipped line 5: dave: login already exists\nskipped line 6: erin: login already exists\nfailed line 4: carol: password is too short (minimum is 8 characters)\n' +
      'failed line 7: frank: no role "nosuch" (cmi roles ls lists them)\n');
    // Two at a time: bob and dave may be created in either order, so their ids are read back.
    const listed = (await t.app.inject({ url: '/users.json', headers: { authorization: t.adminAuth } })).json<Array<{ user: { id: number; login: string } }>>().map((u) => u.user);
    assert.deepEqual(listed.map((u) => u.login).sort(), ['admin', 'alice', 'bob', 'dave', 'erin']);
    const rows: Record<string, string> = {
      admin: 'admin,admin@example.com,Ada,Admin,admin,active,UTC,en,2026-11-20T10:00:00+00:00',
      alice: 'alice,alice@example.com,Alice,User,user,active,,,2026-11-20T10:00:00+00:00',
      bob: 'bob,bob@example.com,Bob,,user,active,,,2026-11-20T10:00:00+00:00',
      dave: 'dave,dave@example.com,"Dave, Jr.",,admin,active,,,2026-11-20T10:00:00+00:00',
      erin: 'erin,erin@example.com,Erin,,admin user,active,,,2026-11-20T10:00:00+00:00',
    };
    succeeded(await cmi(['users', 'export']),
      'id,login,email,first_name,last_name,role,status,time_zone,locale,created_at\r\n' + listed.map((u) => `${u.id},${rows[u.login]}\r\n`).join(''));
    failed(await cmi(['users', 'import', join(home, 'missing.csv')]), 2, `cmi: cannot read ${join(home, 'missing.csv')}: ENOENT\n`);
  });

  it('errors ls, show, histogram, report, rm', async () => {
    const report = { error_class: 'AttachTimeout', message: 'attach timed out\nsecond line', host: 'hv-01', component: 'storage', backtrace: 'a.ts:1\nb.ts:2' };
    const posted = await t.app.inject({ method: 'POST', url: '/sysadmin_tools/infrastructure/errors.json', headers: { authorization: t.adminAuth }, payload: report });
    const id = posted.json<{ infrastructure_error: { id: number; fingerprint: string } }>().infrastructure_error;
    succeeded(await cmi(['errors', 'ls', '--unreported']),
      'ID  COUNT  LAST SEEN                  STATUS      ASSIGNEE  REPORTED  CLASS          MESSAGE\n' +
      `${id.id}   1      2026-11-20T10:00:00+00:00  unresolved  -         no        AttachTimeout  attach timed out\n1 of 1 errors (page 1 of 1)\n`);
    const shown = await cmi(['errors', 'show', String(id.id)]);
    succeeded(shown, `id: ${id.id}\nbacktrace:\n    a.ts:1\n    b.ts:2\ncounter: 1\ncreated_at: 2026-11-20T10:00:00+00:00\nerror_class: AttachTimeout\n` +
      `fingerprint: ${id.fingerprint}\nmessage: attach timed out\n    second line\nreported: false\nupdated_at: 2026-11-20T10:00:00+00:00\n\n` +
      'Latest occurrences (1 of 1 kept):\n  OCCURRED AT                HOST   COMPONENT  REQUEST ID\n  2026-11-20T10:00:00+00:00  hv-01  storage    -\n\n' +
      'Triage:\n  status: unresolved\n  assignee: -\n\nLatest notes (0 of 0):\n\n' +
      'By host (1 of 1):\n  HOST   COUNT\n  hv-01  1\n\nBy component (1 of 1):\n  COMPONENT  COUNT\n  storage    1\n');
    const histogram = await cmi(['errors', 'histogram', String(id.id)]);
    succeeded(histogram, /^START {22}COUNT\n2026-11-19T11:00:00\+00:00 {2}0\n[^]*2026-11-20T10:00:00\+00:00 {2}1 {6}#{40}\n1 occurrences in 24 buckets\n$/);
    succeeded(await cmi(['errors', 'report', String(id.id)]), `Reported infrastructure error ${id.id} (AttachTimeout: attach timed out)\n`);
    succeeded(await cmi(['errors', 'rm', String(id.id)]), `Deleted infrastructure error ${id.id} (AttachTimeout: attach timed out)\n`);
    failed(await cmi(['errors', 'show', String(id.id)]), 1, 'cmi: Resource not found\n');
    failed(await cmi(['errors', 'histogram', '1', '--period', '1y']), 2, 'cmi: --period must be 24h, 7d or 30d (got "1y")\n');
  });

  it('errors show prints a reporter\'s control characters visibly escaped, never as escape sequences', async () => {
    const report = { error_class: 'Evil', message: 'clip\x1b]52;c;cHduZWQ=\x07 board\nhide\x1b[8m me', host: 'hv-01', backtrace: 'a.ts:1\x1b[2J\nb.ts:2' };
    const posted = await t.app.inject({ method: 'POST', url: '/sysadmin_tools/infrastructure/errors.json', headers: { authorization: t.adminAuth }, payload: report });
    assert.equal(posted.statusCode, 201);
    const id = posted.json<{ infrastructure_error: { id: number } }>().infrastructure_error.id;
    const shown = await cmi(['errors', 'show', String(id)]);
    assert.ok(shown.stdout.includes('\nbacktrace:\n    a.ts:1\\x1b[2J\n    b.ts:2\n'), shown.stdout);
    assert.ok(shown.stdout.includes('\nmessage: clip\\x1b]52;c;cHduZWQ=\\x07 board\n    hide\\x1b[8m me\n'), shown.stdout);
    succeeded(shown, /^(?:\n|\P{Cc})*$/u);
    succeeded(await cmi(['errors', 'rm', String(id)]), /^Deleted infrastructure error /);
  });

  it('deliveries ls: the server\'s webhook deliveries, the oldest first, filtered by --state; --json is the API\'s body', async () => {
    const delivery = (id: number, state: 'delivered' | 'failed', lastStatus: number | null, deliveredAt: string | null) => ({
      delivery_id: `00000000-0000-4000-8000-00000000000${id}`, kind: id === 1 ? 'new' as const : 'report' as const, error_id: 7, url: `https://hooks-${id}.example.com/secret-path`, body: '{}',
      state, attempts: id, last_status: lastStatus, created_at: '2026-11-20T10:00:00.000Z', next_attempt_at: '2026-11-20T10:00:00.000Z', delivered_at: deliveredAt,
    });
    await t.database.db.insertInto('webhook_deliveries').values([delivery(1, 'delivered', 200, '2026-11-20T10:00:01.000Z'), delivery(2, 'failed', 500, null)]).execute();
    const [first, second] = (await t.database.db.selectFrom('webhook_deliveries').select('id').orderBy('id').execute()).map((row) => Number(row.id));
    succeeded(await cmi(['deliveries', 'ls'], AS_ADMIN()),
      'ID  KIND    ERROR  STATE      TRIES  STATUS  CREATED                    DELIVERED                  URL\n' +
      `${first}   new     7      delivered  1      200     2026-11-20T10:00:00+00:00  2026-11-20T10:00:01+00:00  https://hooks-1.example.com/…\n` +
      `${second}   report  7      failed     2      500     2026-11-20T10:00:00+00:00  -                          https://hooks-2.example.com/…\n` +
      '2 of 2 deliveries (page 1 of 1)\n');
    succeeded(await cmi(['deliveries', 'ls', '--state', 'failed', '--all'], AS_ADMIN()),
      'ID  KIND    ERROR  STATE   TRIES  STATUS  CREATED                    DELIVERED  URL\n' +
      `${second}   report  7      failed  2      500     2026-11-20T10:00:00+00:00  -          https://hooks-2.example.com/…\n1 deliveries\n`);
    const body = (await t.app.inject({ url: '/sysadmin_tools/infrastructure/deliveries.json?state=delivered', headers: { authorization: t.adminAuth } })).body;
    succeeded(await cmi(['deliveries', 'ls', '--state', 'delivered', '--json'], AS_ADMIN()), `${body.replace(/\n$/, '')}\n`);
    failed(await cmi(['deliveries', 'ls', '--state', 'lost'], AS_ADMIN()), 1, 'cmi: state must be one of pending, failed, delivered\n');
    failed(await cmi(['deliveries', 'ls', '--url', url, '--user', ALICE.login], { CMI_PASSWORD: ALICE.password }), 1, 'cmi: You are not authorized to perform this action (needs webhook_deliveries.read)\n');
  });

  it('an ordinary user is refused the tracker: exit 1 and the server\'s message', async () => {
    failed(await cmi(['errors', 'ls', '--url', url, '--user', ALICE.login], { CMI_PASSWORD: ALICE.password }), 1, 'cmi: You are not authorized to perform this action (needs infrastructure_errors.read)\n');
  });

  /** No server named, no profile saved (a fresh config directory). */
  const NO_SERVER = () => ({ XDG_CONFIG_HOME: join(home, 'empty-config') });
  const NO_SERVER_MESSAGE = 'cmi: no server: give --url URL (or CMI_URL), --profile NAME, or save one with cmi login\n';
  const withoutServer = (old: string, now: string) =>
    `cmi: "cmi ${old}" with no server named is now "cmi ${now}" (a server: give --url URL or CMI_URL, --profile NAME, or save one with cmi login)\n`;

  it('every old spelling exits 2 with one line naming its new spelling, and acts on nothing', async () => {
    const cases: Array<[string[], string]> = [
      [['users', 'list'], 'cmi: "cmi users list" is now "cmi local users ls" (or "cmi users ls" on a server)\n'],
      [['users', 'list', '--help'], 'cmi: "cmi users list" is now "cmi local users ls" (or "cmi users ls" on a server)\n'],
      [['users', 'create', '--login', 'root', '--email', 'root@example.com', '--password', 'root-password', '--admin'],
        'cmi: "cmi users create" is now "cmi local users add" (or "cmi users add" on a server)\n'],
      [['users', 'update', 'root', '--user'], 'cmi: "cmi users update" is now "cmi local users edit" (or "cmi users edit" on a server); --user is now --ordinary\n'],
      [['users', 'delete', 'root'], 'cmi: "cmi users delete" is now "cmi local users rm" (or "cmi users rm" on a server)\n'],
      [['users', 'unlock', 'root'], 'cmi: "cmi users unlock" is now "cmi local users unlock"\n'],
      [['users', 'reset-password', 'root', '--password', 'new-password'], 'cmi: "cmi users reset-password" is now "cmi local users reset-password"\n'],
      [['users', 'suspend', 'root'], withoutServer('users suspend', 'local users suspend')],
      [['users', 'activate', 'root'], withoutServer('users activate', 'local users activate')],
      [['users', 'api-key', 'root'], withoutServer('users api-key', 'local users api-key')],
      [['local', 'users', 'list'], 'cmi: "cmi local users list" is now "cmi local users ls"\n'],
      [['local', 'users', 'create', '--login', 'root', '--email', 'root@example.com', '--password', 'root-password'], 'cmi: "cmi local users create" is now "cmi local users add"\n'],
      [['local', 'users', 'update', 'root', '--user'], 'cmi: "cmi local users update" is now "cmi local users edit"; --user is now --ordinary\n'],
      [['local', 'users', 'delete', 'root'], 'cmi: "cmi local users delete" is now "cmi local users rm"\n'],
      [['errors', 'list', '--unreported'], 'cmi: "cmi errors list" is now "cmi local errors ls" (or "cmi errors ls" on a server)\n'],
      [['errors', 'delete', '1'], 'cmi: "cmi errors delete" is now "cmi local errors rm" (or "cmi errors rm" on a server)\n'],
      [['errors', 'prune'], 'cmi: "cmi errors prune" is now "cmi local errors prune"\n'],
      [['errors', 'show', '1', '--json'], withoutServer('errors show', 'local errors show')],
      [['errors', 'report', '1'], withoutServer('errors report', 'local errors report')],
      [['local', 'errors', 'list'], 'cmi: "cmi local errors list" is now "cmi local errors ls"\n'],
      [['local', 'errors', 'delete', '1'], 'cmi: "cmi local errors delete" is now "cmi local errors rm"\n'],
      [['deliveries', 'list', '--state', 'failed'], 'cmi: "cmi deliveries list" is now "cmi local deliveries ls" (or "cmi deliveries ls" on a server)\n'],
      [['deliveries', 'retry', '1'], 'cmi: "cmi deliveries retry" is now "cmi local deliveries retry"\n'],
      [['local', 'deliveries', 'list'], 'cmi: "cmi local deliveries list" is now "cmi local deliveries ls"\n'],
      [['ingest-keys', 'create', 'Billing'], 'cmi: "cmi ingest-keys create" is now "cmi ingest-keys add"; the label is --label LABEL\n'],
    ];
    // Every row of the table is tried here (the next release deletes both).
    const tried = new Set(cases.map(([args]) => args.slice(0, args[0] === 'local' ? 3 : 2).join(' ')));
    assert.deepEqual([...tried].sort(), OLD_SPELLINGS.map((row) => row.old).sort());
    for (let i = 0; i < cases.length; i += 4) {
      await Promise.all(cases.slice(i, i + 4).map(async ([args, stderr]) => {
        const res = await cmi(args, NO_SERVER());
        assert.deepEqual([res.code, res.stdout, res.stderr], [2, '', stderr], args.join(' '));
      }));
    }
    // Nothing was created in the database either.
    succeeded(await cmi(['local', 'users', 'ls']), 'ID  LOGIN  EMAIL  ROLE  STATUS\n0 of 0 users (page 1)\n');
  });

  it('cmi users, errors and deliveries never fall back on the database: with no server named, exit 2 and nothing done', async () => {
    succeeded(await cmi(['local', 'users', 'add', '--login', 'root', '--email', 'root@example.com', '--password', 'root-password', '--admin']), 'Created administrator 1 "root" <root@example.com>\n');
    succeeded(await cmi(['local', 'users', 'add', '--login', 'zoe', '--email', 'zoe@example.com', '--password', 'zoe-password']), 'Created user 2 "zoe" <zoe@example.com>\n');
    const [users, errors, deliveries, suspend] = await Promise.all([
      cmi(['users', 'ls'], NO_SERVER()), cmi(['errors', 'ls'], NO_SERVER()), cmi(['deliveries', 'ls'], NO_SERVER()), cmi(['users', 'suspend', 'zoe'], NO_SERVER()),
    ]);
    failed(users, 2, NO_SERVER_MESSAGE);
    failed(errors, 2, NO_SERVER_MESSAGE);
    failed(deliveries, 2, NO_SERVER_MESSAGE);
    failed(suspend, 2, withoutServer('users suspend', 'local users suspend'));
    // Named by --url alone (no profile saved), the same verb acts on the server.
    succeeded(await cmi(['users', 'activate', 'alice', '--url', url, '--user', 'admin'], { ...NO_SERVER(), CMI_PASSWORD: ADMIN.password }), 'Activated user 2 "alice" <alice@example.com>\n');
    succeeded(await cmi(['local', 'users', 'ls']),
      'ID  LOGIN  EMAIL             ROLE   STATUS\n1   root   root@example.com  admin  active\n2   zoe    zoe@example.com   user   active\n2 of 2 users (page 1)\n');
  });

  it('cmi local acts on the configured database also when CMI_URL, --url or a saved profile names a server', async () => {
    // The server's user 2 is alice and it has no zoe; the database's user 2 is zoe.
    succeeded(await cmi(['local', 'users', 'suspend', 'zoe'], AS_ADMIN()), 'Suspended user 2 "zoe" <zoe@example.com>\n');
    succeeded(await cmi(['--url', url, 'local', 'users', 'activate', '2'], AS_ADMIN()), 'Activated user 2 "zoe" <zoe@example.com>\n');
    succeeded(await cmi(['local', 'users', 'ls'], AS_ADMIN()),
      'ID  LOGIN  EMAIL             ROLE   STATUS\n1   root   root@example.com  admin  active\n2   zoe    zoe@example.com   user   active\n2 of 2 users (page 1)\n');
    // The server holds errors and deliveries; the database none.
    succeeded(await cmi(['local', 'errors', 'ls'], AS_ADMIN()), 'ID  COUNT  LAST SEEN  REPORTED  CLASS  MESSAGE\n0 of 0 errors (page 1)\n');
    succeeded(await cmi(['local', 'deliveries', 'ls']), 'ID  KIND  ERROR  STATE  TRIES  STATUS  CREATED  DELIVERED  URL\n0 of 0 deliveries (page 1)\n');
    succeeded(await cmi(['deliveries', 'ls', '--state', 'failed']), /^ID {2}KIND {4}ERROR {2}STATE {3}[^]*\n1 of 1 deliveries \(page 1 of 1\)\n$/);
  });

  /** Runs cmi in a pseudo-terminal (stdout and stderr both the terminal) and returns what it printed. */
  function inTerminal(args: string[], extra: Record<string, string>): Promise<string> {
    const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, '--import', import.meta.resolve('tsx'), main, ...args].map(quote).join(' ');
    return new Promise((resolve, reject) => {
      const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...process.env, ...env, ...extra } });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.on('error', reject);
      child.on('close', () => resolve(output));
    });
  }

  it('on a terminal: a progress bar for --all and export, colour unless NO_COLOR; piped: neither', async () => {
    const onTerminal = await inTerminal(['users', 'ls', '--all', '--per-page', '1'], {});
    assert.match(onTerminal, /\rusers \[#{30}\] 5\/5/);
    const ESC = '\u001b';
    assert.ok(onTerminal.includes(`\r${ESC}[2K`), 'the bar is cleared');
    assert.ok(onTerminal.includes(`${ESC}[1mID${ESC}[0m`), 'the header is bold');
    assert.ok(onTerminal.includes(`${ESC}[32mactive${ESC}[0m`), 'active is green');
    const noColour = await inTerminal(['users', 'ls', '--all', '--per-page', '1'], { NO_COLOR: '1' });
    assert.match(noColour, /\rusers \[#{30}\] 5\/5/);
    assert.ok(!noColour.slice(noColour.indexOf('ID')).includes(`${ESC}[`), 'no colour with NO_COLOR');
    assert.match(await inTerminal(['users', 'export'], {}), /\rusers \[#{30}\] 5\/5/);
    const piped = await cmi(['users', 'ls', '--all', '--per-page', '1']);
    succeeded(piped, /^ID {2}LOGIN {2}EMAIL {14}ROLE {8}STATUS\n1 {3}admin[^]*\n5 users\n$/);
    assert.ok(![ESC, '\r', '#'].some((mark) => (piped.stdout + piped.stderr).includes(mark)), 'no bar, no colour when piped');
  });

  it('help: cmi help users, and --help on a command with its examples', async () => {
    succeeded(await cmi(['help', 'users']), /^Usage: cmi users \[options\] \[command\][^]*\n {2}ls \[options\] +list users on the server/);
    succeeded(await cmi(['users', 'import', '--help']), /Examples:\n {2}\$ cmi users import staff\.csv --concurrency 8\n$/);
    succeeded(await cmi(['help', 'users', 'ls']), /^Usage: cmi users ls \[options\]\n[^]*\n {2}\$ cmi users ls --all --json\n$/);
    failed(await cmi(['help', 'users', 'frob']), 2, 'cmi: no command "users frob" (cmi help lists them)\n');
  });
});
