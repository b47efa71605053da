import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/database.js';
import { type RunningServer, runCmi, startServer } from './support/cli.js';
import { type FreshDatabase, freshDatabase } from './support/database.js';

const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
const LAST_ADMIN = 'cmi: The last active administrator cannot be deleted, suspended or made a user\n';

/**
 * `cmi local users ...` on a fresh database of its own. Each command starts a process (about a second), so the
 * tests build on each other in order and run independent commands side by side: root (1, administrator),
 * bob (2), carol (3, later caroline).
 */
describe('cmi local users', () => {
  let fresh: FreshDatabase;
  let env: Record<string, string>;
  let database: Database | undefined;
  let server: RunningServer | undefined;
  let carolinePassword = '';

  before(async () => {
    fresh = await freshDatabase();
    env = { DATABASE_URL: fresh.url, CMI_ADMIN_PASSWORD: '', LOG_LEVEL: 'warn' };
    // The local commands create no database (test/cli.test.ts): cmi migrate does.
    const migrated = await runCmi(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
  });
  after(async () => {
    if (server) assert.equal(await server.stop(), 0);
    await database?.close();
    await fresh.drop();
  });

  const row = (login: string) => {
    database ??= openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
    return database.db.selectFrom('users').selectAll().where('login', '=', login).executeTakeFirst();
  };

  /** Runs a command that must succeed and print exactly `stdout` (or match it). */
  async function succeeds(args: string[], stdout: string | RegExp, stdin?: string): Promise<string> {
    const res = await runCmi(['local', 'users', ...args], env, stdin);
    assert.equal(res.stderr, '', `${args.join(' ')}: ${res.stderr}`);
    assert.equal(res.code, 0);
    if (typeof stdout === 'string') assert.equal(res.stdout, stdout, args.join(' '));
    else assert.match(res.stdout, stdout);
    return res.stdout;
  }

  /** Runs a command that must fail with exit code 1, print nothing, and say exactly `stderr`. */
  async function fails(args: string[], stderr: string): Promise<void> {
    const res = await runCmi(['local', 'users', ...args], env);
    assert.equal(res.stderr, stderr, args.join(' '));
    assert.equal(res.stdout, '');
    assert.equal(res.code, 1);
  }

  /** A server on the same database that checks credentials on every request (CMI_AUTH_CACHE_TTL=0). */
  async function running(): Promise<RunningServer> {
    server ??= await startServer({ ...env, CMI_AUTH_CACHE_TTL: '0' });
    return server;
  }

  async function status(login: string, password: string): Promise<number> {
    const res = await fetch(`${(await running()).baseUrl}/version.json`, { headers: { authorization: basic(login, password) } });
    return res.status;
  }

  it('ls on a database with no users prints the header and a count', async () => {
    await succeeds(['ls'], 'ID  LOGIN  EMAIL  ROLE  STATUS\n0 of 0 users (page 1)\n');
  });

  it('add makes an administrator with --admin, with every field option; the email is lowercased', async () => {
    await succeeds(
      ['add', '--login', 'root', '--email', 'Root@Example.com', '--password', 'root-password', '--admin',
        '--first-name', 'Ro', '--last-name', 'Ot', '--time-zone', 'Europe/London', '--locale', 'en'],
      'Created administrator 1 "root" <root@example.com>\n',
    );
    const root = await row('root');
    assert.equal(root?.role, 'admin');
    assert.equal(root?.status, 'active');
    assert.equal(root?.email, 'root@example.com');
    assert.equal(root?.first_name, 'Ro');
    assert.equal(root?.last_name, 'Ot');
    assert.equal(root?.time_zone, 'Europe/London');
    assert.equal(root?.locale, 'en');
    assert.notEqual(root?.password_hash, 'root-password');
  });

  it('add makes ordinary users, the password from --password or standard input', async () => {
    await succeeds(['add', '--login', 'bob', '--email', 'bob@example.com', '--password-stdin'], 'Created user 2 "bob" <bob@example.com>\n', 'bob-password\n');
    await succeeds(['add', '--login', 'carol', '--email', 'carol@example.com', '--password', 'carol-password'], 'Created user 3 "carol" <carol@example.com>\n');
    const bob = await row('bob');
    assert.equal(bob?.role, 'user');
    assert.equal(bob?.first_name, '');
    assert.equal(bob?.time_zone, null);
  });

  it('refuses unknown users and the last administrator: one line a problem, exit 1', async () => {
    // Bad and taken values are cli.test.ts's; the rules behind them are user-management.test.ts's.
    await Promise.all([
      fails(['edit', 'nobody', '--first-name', 'X'], 'cmi: no user with id, login or email "nobody"\n'),
      fails(['rm', 'root'], LAST_ADMIN),
      fails(['edit', 'root', '--ordinary'], LAST_ADMIN),
    ]);
    const root = await row('root');
    assert.equal(root?.status, 'active');
    assert.equal(root?.role, 'admin');
  });

  it('ls prints an aligned table and a count, paged', async () => {
    await Promise.all([
      succeeds(
        ['ls'],
        'ID  LOGIN  EMAIL              ROLE   STATUS\n' +
          '1   root   root@example.com   admin  active\n' +
          '2   bob    bob@example.com    user   active\n' +
          '3   carol  carol@example.com  user   active\n' +
          '3 of 3 users (page 1)\n',
      ),
      succeeds(['ls', '--page', '2', '--per-page', '2'], 'ID  LOGIN  EMAIL              ROLE  STATUS\n3   carol  carol@example.com  user  active\n1 of 3 users (page 2)\n'),
    ]);
  });

  it('edit changes the given fields of a user named by email or id', async () => {
    await Promise.all([
      succeeds(['edit', 'bob@example.com', '--first-name', 'Bob', '--last-name', 'Builder', '--time-zone', 'Europe/Paris', '--locale', 'fr'], 'Updated user 2 "bob" <bob@example.com>\n'),
      succeeds(['edit', '3', '--login', 'caroline', '--email', 'Caroline@Example.com'], 'Updated user 3 "caroline" <caroline@example.com>\n'),
    ]);
    const bob = await row('bob');
    assert.equal(bob?.first_name, 'Bob');
    assert.equal(bob?.last_name, 'Builder');
    assert.equal(bob?.time_zone, 'Europe/Paris');
    assert.equal(bob?.locale, 'fr');
    assert.equal((await row('caroline'))?.email, 'caroline@example.com');
    assert.equal(await row('carol'), undefined);
  });

  it('api-key prints a new 64-hex key once and stores only its SHA-256; a new one revokes the old', async () => {
    const printed = /^New API key for 2 "bob" <bob@example.com> \(shown once; the old one no longer works\):\n([0-9a-f]{64})\n$/;
    const firstKey = printed.exec(await succeeds(['api-key', 'bob'], printed))?.[1] as string;
    assert.equal((await row('bob'))?.api_key_hash, createHash('sha256').update(firstKey).digest('hex'));
    assert.equal(await status('bob', firstKey), 200);
    assert.equal(await status('bob@example.com', firstKey), 200);

    const secondKey = printed.exec(await succeeds(['api-key', '2'], printed))?.[1] as string;
    assert.notEqual(secondKey, firstKey);
    assert.equal((await row('bob'))?.api_key_hash, createHash('sha256').update(secondKey).digest('hex'));
    assert.equal(await status('bob', secondKey), 200);
    assert.equal(await status('bob', firstKey), 401);
  });

  it('reset-password prints a generated password that logs in, ends the sessions, and the old password stops working', async () => {
    const login = await fetch(`${(await running()).baseUrl}/version.json`, { headers: { authorization: basic('caroline', 'carol-password') } });
    assert.equal(login.status, 200);
    const cookie = /^(_cmi_session=[^;]+);/.exec(String(login.headers.get('set-cookie')))?.[1] as string;
    assert.ok(cookie);
    const session = async () => (await fetch(`${(await running()).baseUrl}/version.json`, { headers: { cookie } })).status;
    assert.equal(await session(), 200);

    const [generated] = await Promise.all([
      succeeds(['reset-password', 'caroline'], /^New password for 3 "caroline" <caroline@example.com> \(shown once\): (\S{16,})\n$/),
      succeeds(['reset-password', 'bob', '--password-stdin'], 'Password of 2 "bob" <bob@example.com> changed; its sessions have ended\n', 'bob-new-password\n'),
    ]);
    const password = /: (\S+)\n$/.exec(generated)?.[1] as string;
    assert.equal(await session(), 401);
    assert.equal(await status('caroline', 'carol-password'), 401);
    assert.equal(await status('caroline', password), 200);
    assert.equal(await status('caroline@example.com', password), 200);
    assert.equal(await status('bob', 'bob-password'), 401);
    assert.equal(await status('bob', 'bob-new-password'), 200);
    carolinePassword = password;
  });

  it('suspend ends access through a running server; activate restores it', async () => {
    await succeeds(['suspend', 'caroline'], 'Suspended user 3 "caroline" <caroline@example.com>\n');
    const suspended = await row('caroline');
    assert.equal(suspended?.status, 'suspended');
    assert.notEqual(suspended?.suspend_at, null);
    assert.equal(await status('caroline', carolinePassword), 401);

    await succeeds(['activate', 'caroline@example.com'], 'Activated user 3 "caroline" <caroline@example.com>\n');
    const active = await row('caroline');
    assert.equal(active?.status, 'active');
    assert.equal(active?.suspend_at, null);
    assert.equal(await status('caroline', carolinePassword), 200);
  });

  it('rm first marks the user deleted (access ends), then removes the record', async () => {
    await succeeds(['rm', 'caroline'], 'Marked user 3 "caroline" <caroline@example.com> deleted; its access has ended (rm again to remove the record)\n');
    const marked = await row('caroline');
    assert.equal(marked?.status, 'deleted');
    assert.notEqual(marked?.deleted_at, null);
    assert.equal(await status('caroline', carolinePassword), 401);

    await succeeds(['rm', '3'], 'Removed user 3 "caroline" <caroline@example.com>\n');
    assert.equal(await row('caroline'), undefined);
  });

  it('with a second administrator (edit --admin) the first may be suspended, and the second is then the last', async () => {
    await succeeds(['edit', 'bob', '--admin'], 'Updated user 2 "bob" <bob@example.com>\n');
    assert.equal((await row('bob'))?.role, 'admin');
    await succeeds(['suspend', 'root'], 'Suspended user 1 "root" <root@example.com>\n');
    assert.equal(await status('root', 'root-password'), 401);
    await fails(['suspend', 'bob'], LAST_ADMIN);
    assert.equal((await row('bob'))?.status, 'active');
  });
});
