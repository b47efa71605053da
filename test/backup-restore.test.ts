import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app/app.js';
import { BACKED_UP_TABLES, DERIVED_TABLES } from '../src/backup/backup-tables.js';
import { tableNames } from '../src/backup/backup.js';
import { loadConfig } from '../src/config.js';
import { type Database, migrateTo, openDatabase } from '../src/db/database.js';
import { createTestApp, type TestApp } from './support/app.js';
import { runCmi, startServer } from './support/cli.js';
import { type FreshDatabase, freshDatabase, onPostgres } from './support/database.js';
import { ERRORS } from './support/error-reports.js';

// cmi backup and cmi restore (docs/operations.md#backup-and-restore), run as the command an operator
// types, against the databases the suite runs on; across SQLite and PostgreSQL when it runs on PostgreSQL.

const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

/** An empty SQLite database, whichever database the suite runs on. */
function sqliteDatabase(): Promise<FreshDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'cmi-restore-'));
  return Promise.resolve({ url: `sqlite:${join(dir, 'cmi.sqlite3')}`, drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })) });
}

/** An empty PostgreSQL schema (the suite runs on PostgreSQL). */
async function postgresDatabase(): Promise<FreshDatabase> {
  const previous = process.env.DATABASE_URL;
  process.env.DATABASE_URL = POSTGRES;
  try {
    return await freshDatabase();
  } finally {
    process.env.DATABASE_URL = previous;
  }
}

/** An app serving the database at `url` (as a restored installation would), and how to close it. */
async function appOn(url: string, t: TestApp): Promise<{ app: FastifyInstance; database: Database; close(): Promise<void> }> {
  const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' });
  const database = openDatabase(config);
  const app = await buildApp({ config, database, clock: t.time.clock, logger: false });
  return { app, database, async close() { await app.close(); await database.close(); } };
}

const cmi = (args: string[], url: string) => runCmi(args, { DATABASE_URL: url });

describe('cmi backup and cmi restore', () => {
  let t: TestApp;
  let dir: string;
  let apiKey: string;
  const targets: FreshDatabase[] = [];
  const target = async (make: () => Promise<FreshDatabase> = freshDatabase) => {
    const fresh = await make();
    targets.push(fresh);
    return fresh;
  };

  beforeEach(async () => {
    t = await createTestApp();
    dir = mkdtempSync(join(tmpdir(), 'cmi-backup-'));
    const call = (method: 'POST' | 'PUT', url: string, body: unknown) =>
      t.app.inject({ method, url, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    assert.equal((await call('POST', '/roles.json', { role: { label: 'Readers "ü" <x>', permission_ids: [22, 26] } })).statusCode, 201);
    assert.equal((await call('POST', '/billing/buckets.json', { bucket: { label: 'Gold', currency_code: 'EUR', monthly_price: 12.5 } })).statusCode, 201);
    assert.equal((await call('PUT', `/users/${t.alice.id}.json`, { role_ids: [2, 3], bucket_id: 1 })).statusCode, 204);
    for (const [error_class, host] of [['TypeError', 'web-1'], ['TypeError', 'web-2'], ['RangeError', 'db-1'], ['Ümlaut\nLine', null]]) {
      assert.equal((await call('POST', `${ERRORS}.json`, { error_class, message: `it failed on ${host}`, host, component: 'billing', backtrace: 'a.ts:1\nb.ts:2' })).statusCode < 300, true);
    }
    // Triage, a note and their activity, which a restore keeps too.
    assert.equal((await call('PUT', `${ERRORS}/1/triage.json`, { triage: { status: 'resolved', assignee_id: t.alice.id } })).statusCode, 200);
    assert.equal((await call('POST', `${ERRORS}/1/notes.json`, { note: { body: 'Fixed by the pool change <b>' } })).statusCode, 201);
    const key = await t.app.inject({ method: 'POST', url: `/users/${t.alice.id}/make_new_api_key.json`, headers: { authorization: t.adminAuth } });
    apiKey = key.json<{ user: { api_key: string } }>().user.api_key;
  });

  afterEach(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
    for (const fresh of targets.splice(0)) await fresh.drop();
  });

  /** What the API answers on `app` for the records a backup must keep, as [url, status, body]. */
  async function answers(app: FastifyInstance): Promise<Array<[string, number, string]>> {
    const urls = [
      '/users.json?per_page=100', '/users.xml', `/users/${t.alice.id}.json`, '/roles.json', '/roles/3.xml', '/permissions.json?per_page=100',
      '/billing/buckets.json', `${ERRORS}.json?per_page=100`, `${ERRORS}.xml?sort=counter`, `${ERRORS}/1.json`, `${ERRORS}/1/occurrences.json`,
      `${ERRORS}/1/breakdown.json?by=host`, `${ERRORS}/1/histogram.json`, `${ERRORS}.json?q=failed`, `${ERRORS}.json?component=billing&host=web-2`,
      `${ERRORS}/1/triage.json`, `${ERRORS}/1/activity.json`, `${ERRORS}/1/notes.json`, `${ERRORS}.json?status=resolved`,
      // The trail as it was; the restore adds its own row after it (below).
      '/sysadmin_tools/audit_log.json?per_page=100&target_type=user', '/sysadmin_tools/audit_log.xml?target_type=infrastructure_error',
    ];
    const result: Array<[string, number, string]> = [];
    for (const url of urls) {
      const res = await app.inject({ url, headers: { authorization: t.adminAuth } });
      result.push([url, res.statusCode, res.body]);
    }
    return result;
  }

  async function roundTrip(to: FreshDatabase): Promise<void> {
    const file = join(dir, 'cmi.backup');
    const backup = await cmi(['backup', file], t.config.databaseUrl);
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, /^Backed up 2 users, 3 roles, 3 errors, 4 occurrences \(schema \d{3}_\w+\) to .*cmi\.backup: \d+ bytes, checked\n$/);
    const restore = await cmi(['restore', file, '--json'], to.url);
    assert.equal(restore.code, 0, restore.stderr);
    const summary = JSON.parse(restore.stdout) as { migrated: string[]; rows: Record<string, number> };
    assert.deepEqual([summary.migrated, summary.rows.users, summary.rows.infrastructure_errors], [[], 2, 3]);

    const restored = await appOn(to.url, t);
    try {
      assert.deepEqual(await answers(restored.app), await answers(t.app));
      // The restore is in the trail, by the operator at the command line.
      const last = await restored.app.inject({ url: '/sysadmin_tools/audit_log.json?per_page=1', headers: { authorization: t.adminAuth } });
      const event = (JSON.parse(last.body) as Array<{ audit_event: Record<string, unknown> }>)[0]!.audit_event;
      assert.deepEqual([event.actor_id, event.actor_login, event.credential, event.action, event.target_type, (event.changes as { rows: Record<string, number> }).rows.users],
        [null, 'system', 'local', 'database.restore', 'database', 2]);
      // Keys and passwords still work; the next user gets the next id.
      const byKey = await restored.app.inject({ url: '/version.json', headers: { authorization: t.basic('alice', apiKey) } });
      assert.equal(byKey.statusCode, 200);
      const added = await restored.app.inject({ method: 'POST', url: '/users.json', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: JSON.stringify({ user: { login: 'carol', email: 'carol@example.com', password: 'carol-password-1' } }) });
      assert.equal(added.json<{ user: { id: number } }>().user.id, 3);
    } finally {
      await restored.close();
    }
  }

  it('backs up every table cmi keeps data in, or derives it: a new table must be named in backup-tables.ts', async () => {
    const kept = new Set(BACKED_UP_TABLES.map(({ table }) => table));
    const unnamed = (await tableNames(t.database)).filter((table) => !kept.has(table) && !DERIVED_TABLES.has(table));
    assert.deepEqual(unnamed, []);
  });

  it('restores into an empty database: the API answers byte for byte as before, keys still valid', async () => {
    await roundTrip(await target());
  });

  it('moves an installation from SQLite to PostgreSQL and back', { skip: !onPostgres && 'the suite runs on SQLite; on PostgreSQL this test runs' }, async () => {
    await roundTrip(await target(sqliteDatabase));
    await roundTrip(await target(postgresDatabase));
  });

  it('refuses a truncated or damaged file, and changes nothing', async () => {
    const file = join(dir, 'good.backup');
    assert.equal((await cmi(['backup', file], t.config.databaseUrl)).code, 0);
    const bytes = readFileSync(file);
    const plain = gunzipSync(bytes);
    const cases: Array<[string, Buffer, RegExp]> = [
      ['truncated.backup', bytes.subarray(0, bytes.length - 40), /it is not a whole gzip file|the file is truncated/],
      ['last-line-gone.backup', gzipSync(plain.subarray(0, plain.lastIndexOf('\n', plain.length - 2) + 1)), /should end the backup|the file is truncated/],
      ['changed.backup', gzipSync(Buffer.from(plain.toString('utf8').replace('TypeError', 'TypoError'))), /its checksum does not match its contents: the file is damaged/],
      ['not-a-backup.backup', Buffer.from('hello'), /it is not a whole gzip file/],
    ];
    const fresh = await target();
    for (const [name, content, message] of cases) {
      writeFileSync(join(dir, name), content);
      const result = await cmi(['restore', join(dir, name)], fresh.url);
      assert.equal(result.code, 1, name);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, new RegExp(`^cmi: cannot restore .*${name}: `));
      assert.match(result.stderr, message, name);
      assert.match(result.stderr, /; nothing was changed\n$/);
    }
    // The target is still as it was: never migrated.
    const database = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
    try {
      assert.deepEqual((await tableNames(database)).filter((table) => table !== 'sqlite_sequence'), []);
    } finally {
      await database.close();
    }
  });

  it('refuses a database that holds data unless --force, which first backs it up', async () => {
    const file = join(dir, 'cmi.backup');
    assert.equal((await cmi(['backup', file], t.config.databaseUrl)).code, 0);
    const other = await createTestApp();
    try {
      const refused = await cmi(['restore', file], other.config.databaseUrl);
      assert.deepEqual([refused.code, refused.stdout], [1, '']);
      assert.match(refused.stderr, /^cmi: cannot restore .*: the database holds 2 users and 0 errors: restore only into an empty database, or with --force, which takes a backup of it first; nothing was changed\n$/);

      const forced = await cmi(['restore', file, '--force'], other.config.databaseUrl);
      assert.equal(forced.code, 0, forced.stderr);
      const saved = readdirSync(dir).filter((name) => name.startsWith('cmi.backup.replaced-'));
      assert.equal(saved.length, 1);
      assert.match(forced.stderr, /^Backed up 2 users, 2 roles, 0 errors, 0 occurrences .* to .*cmi\.backup\.replaced-.*, checked\n$/);
      const restored = await appOn(other.config.databaseUrl, t);
      try {
        assert.deepEqual(await answers(restored.app), await answers(t.app));
      } finally {
        await restored.close();
      }
    } finally {
      await other.close();
    }
  });

  it('refuses a backup of a newer cmi; migrates one of an older cmi after loading it', async () => {
    const file = join(dir, 'cmi.backup');
    assert.equal((await cmi(['backup', file], t.config.databaseUrl)).code, 0);
    const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n').slice(0, -1);
    const header = JSON.parse(lines[0] as string) as { migrations: string[] };
    header.migrations.push('999_from_the_future');
    const body = [JSON.stringify(header), ...lines.slice(1, -1)].map((line) => `${line}\n`).join('');
    const end = JSON.parse(lines.at(-1) as string) as { sha256: string };
    end.sha256 = createHash('sha256').update(body).digest('hex');
    writeFileSync(join(dir, 'newer.backup'), gzipSync(`${body}${JSON.stringify(end)}\n`));
    const fresh = await target();
    const newer = await cmi(['restore', join(dir, 'newer.backup')], fresh.url);
    assert.equal(newer.code, 1);
    assert.match(newer.stderr, /: it is of a newer cmi \(its schema is 999_from_the_future; this cmi's is \d{3}_\w+\): restore it with that cmi or a later one; nothing was changed\n$/);

    // A database as cmi left it before roles (migration 015), backed up and restored by this cmi.
    const old = await target();
    const database = openDatabase(loadConfig({ DATABASE_URL: old.url }));
    try {
      await migrateTo(database, '015_credential_changes');
      const at = '2026-01-02T03:04:05.000Z';
      await database.db.insertInto('users').values([
        { login: 'root', email: 'root@example.com', password_hash: 'x', first_name: 'R', last_name: 'T', status: 'active', role: 'admin', time_zone: null, locale: null, api_key_hash: null, created_at: at, updated_at: at, activated_at: at, suspend_at: null, deleted_at: null, password_changed_at: null },
        { login: 'bob', email: 'bob@example.com', password_hash: 'x', first_name: 'B', last_name: 'B', status: 'active', role: 'user', time_zone: null, locale: null, api_key_hash: null, created_at: at, updated_at: at, activated_at: at, suspend_at: null, deleted_at: null, password_changed_at: null },
      ] as never).execute();
    } finally {
      await database.close();
    }
    const oldFile = join(dir, 'old.backup');
    assert.equal((await cmi(['backup', oldFile], old.url)).code, 0);
    const restoreTo = await target();
    const restored = await cmi(['restore', oldFile], restoreTo.url);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout, /^Restored 2 users, 0 roles, 0 errors, 0 occurrences \(schema 015_credential_changes\) from .*old\.backup\nThen applied 016_roles, 017_billing_buckets, /);
    const check = openDatabase(loadConfig({ DATABASE_URL: restoreTo.url }));
    try {
      const held = await check.db.selectFrom('user_roles').innerJoin('users', 'users.id', 'user_roles.user_id').select(['users.login', 'user_roles.role_id']).orderBy('users.login').execute();
      assert.deepEqual(held.map((row) => [row.login, Number(row.role_id)]), [['bob', 2], ['root', 1]]);
    } finally {
      await check.close();
    }
  });
});

describe('cmi backup of a serving database', () => {
  let fresh: FreshDatabase;
  let dir: string;
  before(async () => {
    fresh = await freshDatabase();
    dir = mkdtempSync(join(tmpdir(), 'cmi-backup-'));
  });
  after(async () => {
    await fresh.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every error acknowledged before it began while reports keep arriving, and restores to a sound database', async () => {
    const server = await startServer({ DATABASE_URL: fresh.url, CMI_ADMIN_PASSWORD: 'admin-password-1' });
    const auth = `Basic ${Buffer.from('admin:admin-password-1').toString('base64')}`;
    const acknowledged: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const res = await fetch(`${server.baseUrl}${ERRORS}.json`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ error_class: `E${i}`, message: 'm' }) });
        if (res.status === 201) acknowledged.push(`E${i}`);
        await res.arrayBuffer();
      }
    })();
    try {
      while (acknowledged.length < 50) await new Promise((resolve) => setTimeout(resolve, 10));
      const before = [...acknowledged];
      const file = join(dir, 'live.backup');
      const backup = await cmi(['backup', file, '--json'], fresh.url);
      assert.equal(backup.code, 0, backup.stderr);
      writing = false;
      await writer;
      const kept = new Set(gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter((line) => line.startsWith('[')).map((line) => JSON.parse(line) as unknown[]).map((row) => row[2]));
      assert.deepEqual(before.filter((errorClass) => !kept.has(errorClass)), []);

      const to = await freshDatabase();
      try {
        assert.equal((await cmi(['restore', file], to.url)).code, 0);
        const database = openDatabase(loadConfig({ DATABASE_URL: to.url }));
        try {
          if (database.dialect.name === 'sqlite') {
            const { rows } = await (await import('kysely')).sql<{ integrity_check: string }>`pragma integrity_check`.execute(database.db);
            assert.deepEqual(rows, [{ integrity_check: 'ok' }]);
          }
          const counted = await database.db.selectFrom('infrastructure_errors').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
          assert.equal(Number(counted.n) >= before.length, true, 'every acknowledged error restored');
        } finally {
          await database.close();
        }
      } finally {
        await to.drop();
      }
    } finally {
      writing = false;
      await writer.catch(() => {});
      await server.stop();
    }
    assert.equal(existsSync(join(dir, 'live.backup')), true);
  });
});
