import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCmi, startServer } from './support/cli.js';
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

  it('migrate creates and migrates the database, then finds it up to date', async () => {
    const first = await runCmi(['migrate'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'Applied 001_initial, 002_sessions_and_lockout, 003_change_notifications, 004_row_blocks\n');
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
      assert.equal(await res.text(), '{"version":"1.0"}');
      const byEmail = await fetch(`${server.baseUrl}/users.json`, { headers: { authorization: basic('admin@localhost', password) } });
      assert.equal(byEmail.status, 200);

      // users create works against the same database while the server runs.
      const created = await runCmi(['users', 'create', '--login', 'bob', '--email', 'Bob@Example.com', '--password-stdin', '--first-name', 'Bob'], env, 'bob-password\n');
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

  it('users create names every bad field and exits 1', async () => {
    const res = await runCmi(['users', 'create', '--login', '-x', '--email', 'nope', '--password', 'short'], env);
    assert.equal(res.code, 1);
    assert.equal(
      res.stderr,
      'cmi: login must be 2-40 characters of letters, digits and _ @ . -, not starting with - or @\n' +
        'cmi: email is invalid\ncmi: password is too short (minimum is 8 characters)\n',
    );
    const duplicate = await runCmi(['users', 'create', '--login', 'bob', '--email', 'b2@example.com', '--password', 'long-enough', '--admin'], env);
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
      const res = await runCmi(['serve', ...flags], { ...env, ...overrides });
      assert.equal(res.code, 1, expected);
      assert.equal(res.stderr, expected);
    }
  });

  it('a bad first-administrator setting stops start-up with one line naming the variable', async () => {
    const empty = await freshDatabase();
    try {
      const res = await runCmi(['serve', '--port', '0'], { DATABASE_URL: empty.url, CMI_ADMIN_EMAIL: 'not an email' });
      assert.equal(res.code, 1);
      assert.equal(res.stderr, 'cmi: CMI_ADMIN_EMAIL is invalid\n');
    } finally {
      await empty.drop();
    }
  });
});
