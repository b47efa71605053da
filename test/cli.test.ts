import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SETTINGS } from '../src/config.js';
import { displayDatabaseUrl, dialectFor } from '../src/db/database-url.js';
import { runCmi, runCmiProcess, startServer } from './support/cli.js';
import { type FreshDatabase, freshDatabase } from './support/database.js';

const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

describe('the cmi command', () => {
  let first: FreshDatabase;
  let second: FreshDatabase;
  let env: Record<string, string>;
  before(async () => {
    first = await freshDatabase();
    second = await freshDatabase();
    env = { DATABASE_URL: first.url, CMI_ADMIN_PASSWORD: '' };
  });
  after(async () => {
    await first.drop();
    await second.drop();
  });

  it('serve --help lists every setting with the default config.ts gives it, and the flags laid over them', async () => {
    const help = await runCmi(['serve', '--help'], {});
    assert.equal(help.code, 0, help.stderr);
    const environment = help.stdout.slice(help.stdout.indexOf('Environment'));
    const listed = [...environment.matchAll(/^ {2}([A-Z_]+) +(.+)$/gm)].map((line) => [line[1], line[2]]);
    assert.deepEqual(listed.map(([name]) => name), Object.keys(SETTINGS));
    for (const [name, text] of listed) {
      const setting = SETTINGS[name as keyof typeof SETTINGS];
      assert.equal(text, setting.default === undefined ? setting.help : `${setting.help} (default ${setting.default})`);
    }
    assert.match(help.stdout, /--port <port> +port to listen on \(0: any free port\) \(default 3000\);\s+env PORT/);
    assert.match(help.stdout, /--workers <n> +server processes sharing the port, or auto for one per\s+core \(default 1\); env CMI_WORKERS/);
  });

  it('a setting left unset takes the default serve --help names', async () => {
    const own = await freshDatabase();
    const server = await startServer({ DATABASE_URL: own.url, CMI_ADMIN_PASSWORD: '', CMI_MAX_PER_PAGE: '' });
    try {
      const password = /Created administrator "admin" with password: (\S+)/.exec(server.output)?.[1] ?? '';
      const res = await fetch(`${server.baseUrl}/users.json?per_page=${Number(SETTINGS.CMI_MAX_PER_PAGE.default) + 1}`, { headers: { authorization: basic('admin', password) } });
      assert.equal(res.status, 422);
      assert.equal(await res.text(), `{"errors":{"per_page":["must be an integer from 1 to ${SETTINGS.CMI_MAX_PER_PAGE.default}"]}}`);
    } finally {
      assert.equal(await server.stop(), 0);
      await own.drop();
    }
  });

  const noDatabase = (where: string) =>
    `cmi: no cmi database at ${where}: point DATABASE_URL at yours (a sqlite: path is read from the working directory), or create this one with cmi migrate (or cmi serve)\n`;

  it('a local command run where there is no database creates none: exit 2, the absolute path looked at and how to create one', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'cmi-elsewhere-'));
    try {
      // DATABASE_URL unset: the default, sqlite:./data/cmi.sqlite3, from the working directory.
      const local = { DATABASE_URL: '', CMI_URL: '', XDG_CONFIG_HOME: join(elsewhere, 'config') };
      const commands = [
        ['local', 'users', 'ls'], ['local', 'users', 'add', '--login', 'ops', '--email', 'ops@example.com', '--password', 'ops-password', '--admin'],
        ['local', 'users', 'reset-password', 'admin'], ['local', 'errors', 'ls', '--json'], ['local', 'errors', 'prune'], ['local', 'deliveries', 'ls'],
      ];
      for (const args of commands) {
        // Own processes in `elsewhere`: a sqlite: path is read from the process's working directory (src/db/database-url.ts).
        const res = await runCmiProcess(args, local, undefined, elsewhere);
        assert.deepEqual([res.code, res.stdout, res.stderr], [2, '', noDatabase(join(elsewhere, 'data', 'cmi.sqlite3'))], args.join(' '));
      }
      assert.deepEqual(readdirSync(elsewhere), []);
      // Asked to, cmi migrate creates it there; then the local commands use it.
      const migrated = await runCmiProcess(['migrate'], local, undefined, elsewhere);
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.ok(existsSync(join(elsewhere, 'data', 'cmi.sqlite3')));
      const listed = await runCmiProcess(['local', 'users', 'ls'], local, undefined, elsewhere);
      assert.deepEqual([listed.code, listed.stdout, listed.stderr], [0, 'ID  LOGIN  EMAIL  ROLE  STATUS\n0 of 0 users (page 1)\n', '']);
      // A file that is there but no cmi database (an empty one, as earlier versions left) is refused too, not filled in.
      writeFileSync(join(elsewhere, 'empty.sqlite3'), '');
      const empty = await runCmiProcess(['local', 'users', 'ls'], { ...local, DATABASE_URL: 'sqlite:empty.sqlite3' }, undefined, elsewhere);
      assert.deepEqual([empty.code, empty.stdout, empty.stderr], [2, '', noDatabase(join(elsewhere, 'empty.sqlite3'))]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('a local command on the configured database before anything migrated it (a new file, or an empty PostgreSQL schema) creates no table', async () => {
    const empty = await freshDatabase();
    try {
      const res = await runCmi(['local', 'users', 'add', '--login', 'ops', '--email', 'ops@example.com', '--password', 'ops-password'], { DATABASE_URL: empty.url });
      assert.deepEqual([res.code, res.stdout, res.stderr], [2, '', noDatabase(displayDatabaseUrl(dialectFor(empty.url).target))]);
      const migrate = await runCmi(['migrate'], { DATABASE_URL: empty.url });
      assert.match(migrate.stdout, /^Applied 001_initial, /);
    } finally {
      await empty.drop();
    }
  });

  it('every usage mistake exits 2 with commander\'s message: an unknown command or option, a missing argument, too many; --help exits 0', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['frobnicate'], /^error: unknown command 'frobnicate'\n/],
      [['local', 'users', 'ls', '--bogus'], /^error: unknown option '--bogus'\n/],
      [['local', 'users', 'edit'], /^error: missing required argument 'user'\n/],
      [['local', 'errors', 'ls', '--reported', '--unreported'], /^error: option '--reported' cannot be used with option '--unreported'\n/],
      [['migrate', 'now'], /^error: too many arguments for 'migrate'\. Expected 0 arguments but got 1\.\n/],
      [['serve', '--port'], /^error: option '--port <port>' argument missing\n/],
      [['local', 'frobnicate'], /^error: unknown command 'frobnicate'\n/],
      [[], /^Usage: cmi \[options\] \[command\]\n/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCmi(args, env)));
    results.forEach((res, i) => {
      const [args, stderr] = cases[i]!;
      assert.equal(res.code, 2, args.join(' '));
      assert.equal(res.stdout, '', args.join(' '));
      assert.match(res.stderr, stderr, args.join(' '));
    });
    const help = await runCmi(['local', 'users', 'ls', '--help'], env);
    assert.deepEqual([help.code, help.stderr], [0, '']);
    assert.match(help.stdout, /^Usage: cmi local users ls \[options\]\n/);
  });

  it('--version and -V print cmi\'s version from package.json and exit 0, touching no database', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const res = await runCmi([flag], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
      assert.deepEqual([res.code, res.stdout, res.stderr], [0, `cmi ${version}\n`, ''], flag);
    }
  });

  it('migrate creates and migrates the database, then finds it up to date', async () => {
    const first = await runCmi(['migrate'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'Applied 001_initial, 002_sessions_and_lockout, 003_change_notifications, 004_row_blocks, 005_login_addresses, 006_error_tracker, 007_error_counts, 008_error_search, 009_error_search_postgres, 010_webhook_deliveries, 011_tracker_change_notifications, 012_notify_table_schema, 013_login_lower_index, 014_wide_counters, 015_credential_changes, 016_roles, 017_billing_buckets, 018_user_buckets, 019_role_credential_changes, 020_user_groups, 021_user_api_keys, 022_ingest_keys, 023_error_triage, 024_audit_log, 025_alert_routing, 026_statement_error_counts, 027_error_list_indexes, 028_error_pair_counts, 029_alert_rule_changes, 030_users_data_changes, 031_triage_counts, 032_bulk_update_costs, 033_two_factor, 034_password_policy, 035_user_white_lists, 036_last_access_log, 037_role_requires_two_factor, 038_identity_providers, 039_ingest_key_kinds, 040_log_sources, 041_log_rules, 043_error_search_backtrace, 047_releases, 048_changes, 049_saved_searches\n');
    const second = await runCmi(['migrate'], env);
    assert.equal(second.stdout, 'Database is up to date\n');
  });

  it('serve creates the first administrator with a random password, printed once, that logs in', async () => {
    const server = await startServer(env);
    try {
      const password = /Created administrator "admin" with password: (\S+)/.exec(server.output)?.[1];
      assert.ok(password, server.output);
      assert.match(server.output, /This password is shown only once/);
      const res = await fetch(`${server.baseUrl}/version.json`, { headers: { authorization: basic('admin', password) } });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), '{"version":"6.7"}');
      const byEmail = await fetch(`${server.baseUrl}/users.json`, { headers: { authorization: basic('admin@localhost', password) } });
      assert.equal(byEmail.status, 200);

      // local users add works against the same database while the server runs.
      const created = await runCmi(['local', 'users', 'add', '--login', 'bob', '--email', 'Bob@Example.com', '--password-stdin', '--first-name', 'Bob'], env, 'bob-password\n');
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.stdout, 'Created user 2 "bob" <bob@example.com>\n');
      const bob = await fetch(`${server.baseUrl}/users.json`, { headers: { authorization: basic('bob', 'bob-password') } });
      assert.equal(bob.status, 200);
      assert.equal(bob.headers.get('x-total'), '1');
      const list = await fetch(`${server.baseUrl}/users.json`, { headers: { authorization: basic('admin', password) } });
      assert.equal(list.headers.get('x-total'), '2');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  it('serve on a database with users creates no one and says how to log in', async () => {
    const server = await startServer({ ...env, CMI_ADMIN_PASSWORD: 'another-password' });
    try {
      assert.doesNotMatch(server.output, /Created administrator/);
      assert.match(server.output, /Log in with an existing user/);
    } finally {
      await server.stop();
    }
  });

  it('serve takes the administrator from CMI_ADMIN_LOGIN, CMI_ADMIN_EMAIL and CMI_ADMIN_PASSWORD, and prints no password', async () => {
    const fresh = { DATABASE_URL: second.url, CMI_ADMIN_LOGIN: 'root', CMI_ADMIN_EMAIL: 'ops@example.com', CMI_ADMIN_PASSWORD: 'chosen-password' };
    const server = await startServer(fresh);
    try {
      assert.match(server.output, /Created administrator "root" with the password from CMI_ADMIN_PASSWORD/);
      assert.doesNotMatch(server.output, /chosen-password/);
      const res = await fetch(`${server.baseUrl}/users.json`, { headers: { authorization: basic('ops@example.com', 'chosen-password') } });
      assert.equal(res.status, 200);
      const [entry] = (await res.json()) as Array<{ user: { login: string; roles: Array<{ role: { identifier: string } }> } }>;
      assert.equal(entry?.user.login, 'root');
      assert.equal(entry?.user.roles[0]?.role.identifier, 'admin');
    } finally {
      await server.stop();
    }
  });

  it('local users add names every bad field and exits 1', async () => {
    const res = await runCmi(['local', 'users', 'add', '--login', '-x', '--email', 'nope', '--password', 'short'], env);
    assert.equal(res.code, 1);
    assert.equal(
      res.stderr,
      'cmi: login must be 2-40 characters of letters, digits and _ @ . -, not starting with - or @\n' +
        'cmi: email is invalid\ncmi: password is too short (minimum is 8 characters)\n',
    );
    const duplicate = await runCmi(['local', 'users', 'add', '--login', 'bob', '--email', 'b2@example.com', '--password', 'long-enough', '--admin'], env);
    assert.equal(duplicate.code, 1);
    assert.equal(duplicate.stderr, 'cmi: login has already been taken\n');
  });

  it('an invalid setting stops start-up with one line naming the variable', async () => {
    const cases: Array<[Record<string, string>, string[], string]> = [
      [{ PORT: 'abc' }, [], 'cmi: PORT must be an integer from 0 to 65535 (got "abc")\n'],
      [{}, ['--max-per-page', '0'], 'cmi: CMI_MAX_PER_PAGE must be an integer from 1 to 100000 (got "0")\n'],
      [{ CMI_DEFAULT_PER_PAGE: '50', CMI_MAX_PER_PAGE: '10' }, [], 'cmi: CMI_DEFAULT_PER_PAGE must not exceed CMI_MAX_PER_PAGE (50 > 10)\n'],
      [{ LOG_LEVEL: 'loud' }, [], 'cmi: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")\n'],
      [{ DATABASE_URL: 'mysql://x' }, [], 'cmi: DATABASE_URL must start with sqlite: or postgres:// (e.g. sqlite:./data/cmi.sqlite3) (got "mysql://x")\n'],
    ];
    for (const [overrides, flags, expected] of cases) {
      // `cmi serve` runs as its own process (test/support/cli.ts): it exits the process and handles its signals.
      const res = await runCmiProcess(['serve', ...flags], { ...env, ...overrides });
      assert.equal(res.code, 1, expected);
      assert.equal(res.stderr, expected);
    }
  });

  it('a bad first-administrator setting stops start-up with one line naming the variable', async () => {
    const empty = await freshDatabase();
    try {
      // `cmi serve` runs as its own process (test/support/cli.ts): it exits the process and handles its signals.
      const res = await runCmiProcess(['serve', '--port', '0'], { DATABASE_URL: empty.url, CMI_ADMIN_EMAIL: 'not an email' });
      assert.equal(res.code, 1);
      assert.equal(res.stderr, 'cmi: CMI_ADMIN_EMAIL is invalid\n');
    } finally {
      await empty.drop();
    }
  });
});
