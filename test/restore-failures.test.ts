import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createTestApp, type TestApp } from './support/app.js';
import { runCmi, spawnCmi } from './support/cli.js';
import { onPostgres } from './support/database.js';
import { ERRORS } from './support/error-reports.js';
import { eventually } from './support/eventually.js';

// What `cmi restore` and `cmi backup` do when something goes wrong (docs/operations.md#backup-and-restore):
// a restore that fails or is killed part-way leaves the database as it was; a crafted file cannot reach a
// table or column that is not cmi's; a mistyped path is one line, exit 1, nothing created. One source and
// one target for the whole file: every restore here fails, so the target never changes.

interface Table { table: string; columns: string[]; rows: unknown[][] }
interface Parsed { header: Record<string, unknown> & { tables: string[] }; tables: Table[] }

/** The backup at `file` as its header and tables. */
function parse(file: string): Parsed {
  const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n').slice(0, -1).map((line) => JSON.parse(line) as unknown);
  const header = lines[0] as Parsed['header'];
  const tables: Table[] = [];
  for (const line of lines.slice(1, -1)) {
    if (Array.isArray(line)) tables.at(-1)!.rows.push(line);
    else if ('columns' in (line as object)) tables.push({ ...(line as { table: string; columns: string[] }), rows: [] });
  }
  return { header, tables };
}

/** Writes `backup` to `file` as cmi backup would: each table's row count, the counts and the checksum at the end. */
function write(file: string, backup: Parsed): void {
  const lines = [JSON.stringify({ ...backup.header, tables: backup.tables.map((t) => t.table) })];
  for (const { table, columns, rows } of backup.tables) {
    lines.push(JSON.stringify({ table, columns }));
    for (const row of rows) lines.push(JSON.stringify(row));
    lines.push(JSON.stringify({ table_end: table, rows: rows.length }));
  }
  const body = lines.map((line) => `${line}\n`).join('');
  const end = { backup_end: true, rows: Object.fromEntries(backup.tables.map((t) => [t.table, t.rows.length])), sha256: createHash('sha256').update(body).digest('hex') };
  writeFileSync(file, gzipSync(`${body}${JSON.stringify(end)}\n`, { level: 1 }));
}

/** What a backup holds, in short: its schema version, each table's row count and a digest of every row. */
function summary(header: Parsed['header'], tables: Table[]): string {
  const rows = Object.fromEntries(tables.map((t) => [t.table, t.rows.length]));
  const sha256 = createHash('sha256').update(JSON.stringify({ migrations: header.migrations, tables })).digest('hex');
  return JSON.stringify({ schema: (header.migrations as string[]).at(-1), rows, sha256 });
}

describe('cmi restore that fails, and paths that are wrong', () => {
  let source: TestApp;
  let target: TestApp;
  let dir: string;
  let good: string;
  /** What the target held before any restore was tried: its rows and its migrations. */
  let held: string;

  /**
   * The rows of every table a backup holds and the migrations of the database at `url` (the backup's
   * header time left out): the last schema version, each table's row count and the SHA-256 of all rows,
   * short enough for assert to show the difference.
   */
  async function contents(url: string): Promise<string> {
    const file = join(dir, `contents-${randomBytes(4).toString('hex')}.backup`);
    const taken = await runCmi(['backup', file], { DATABASE_URL: url });
    assert.equal(taken.code, 0, taken.stderr);
    const { header, tables } = parse(file);
    rmSync(file);
    return summary(header, tables);
  }

  /** The `.replaced-` copies --force wrote beside `file`. */
  const copiesOf = (file: string) => readdirSync(dir).filter((name) => name.startsWith(`${file.split('/').at(-1)!}.replaced-`));

  before(async () => {
    source = await createTestApp();
    target = await createTestApp();
    await target.addUsers(1);
    // Only its database is the target: its app, which writes on its own (the session secret), is closed.
    await target.app.close();
    dir = mkdtempSync(join(tmpdir(), 'cmi-restore-failures-'));
    const report = await source.app.inject({ method: 'POST', url: `${ERRORS}.json`, headers: { authorization: source.adminAuth, 'content-type': 'application/json' }, payload: JSON.stringify({ error_class: 'TypeError', message: 'm' }) });
    assert.equal(report.statusCode < 300, true);
    good = join(dir, 'good.backup');
    assert.equal((await runCmi(['backup', good], { DATABASE_URL: source.config.databaseUrl })).code, 0);
    held = await contents(target.config.databaseUrl);
  });

  after(async () => {
    await source.close();
    await target.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a row the database refuses: --force fails, the target holds what it held, the message names the copy taken first', async () => {
    const backup = parse(good);
    const users = backup.tables.find((t) => t.table === 'users')!;
    users.rows.push(users.rows[0]!);
    const file = join(dir, 'duplicate-user.backup');
    write(file, backup);
    const result = await runCmi(['restore', file, '--force'], { DATABASE_URL: target.config.databaseUrl });
    const copies = copiesOf(file);
    assert.equal(copies.length, 1);
    const copy = join(dir, copies[0]!);
    assert.deepEqual([result.code, result.stdout], [1, '']);
    const [backedUp, refused, ...rest] = result.stderr.split('\n');
    assert.equal(backedUp, `Backed up 3 users, 2 roles, 0 errors, 0 occurrences (schema ${String((backup.header.migrations as string[]).at(-1))}) to ${copy}: ${readFileSync(copy).length} bytes, checked`);
    assert.match(refused!, /^cmi: cannot restore .*duplicate-user\.backup: the database refused a row of users \((UNIQUE constraint failed: users\.id|duplicate key value violates unique constraint "users_pkey")\); nothing was changed \(the backup of the database taken first is at (.*)\)$/);
    assert.equal(refused!.endsWith(`at ${copy})`), true);
    assert.deepEqual(rest, ['']);
    assert.equal(await contents(target.config.databaseUrl), held);
    // The copy is whole and is what the target holds.
    const kept = parse(copy);
    assert.equal(summary(kept.header, kept.tables), held);
    rmSync(copy);
  });

  it('refuses a table that is not cmi\'s, or the migration record, before anything changes: neither is emptied nor written', async () => {
    const database = target.database.db;
    await sql`create table other_app_notes (id integer primary key, body text)`.execute(database);
    await sql`insert into other_app_notes (id, body) values (1, 'keep me')`.execute(database);
    try {
      for (const [name, table, columns, rows] of [
        ['other-table.backup', 'other_app_notes', ['id', 'body'], [[2, 'written by a backup']]],
        ['migration-record.backup', 'kysely_migration', ['name', 'timestamp'], [['999_forged', '2026-01-01T00:00:00.000Z']]],
      ] as const) {
        const backup = parse(good);
        backup.tables.push({ table, columns: [...columns], rows: rows.map((row) => [...row]) });
        const file = join(dir, name);
        write(file, backup);
        const result = await runCmi(['restore', file, '--force'], { DATABASE_URL: target.config.databaseUrl });
        assert.deepEqual([result.code, result.stdout], [1, ''], name);
        assert.equal(result.stderr, `cmi: cannot restore ${file}: it names the table "${table}", which a cmi backup never holds: it was not written by cmi backup; nothing was changed\n`);
        assert.deepEqual(copiesOf(file), [], 'refused before the copy is taken');
      }
      const { rows } = await sql<{ id: number; body: string }>`select id, body from other_app_notes`.execute(database);
      assert.deepEqual(rows.map((row) => [Number(row.id), row.body]), [[1, 'keep me']]);
      assert.equal(await contents(target.config.databaseUrl), held);
    } finally {
      await sql`drop table other_app_notes`.execute(database);
    }
  });

  it('refuses a column its table lacks: the target holds what it held', async () => {
    const backup = parse(good);
    const users = backup.tables.find((t) => t.table === 'users')!;
    users.columns.push('is_root');
    for (const row of users.rows) row.push(1);
    const file = join(dir, 'extra-column.backup');
    write(file, backup);
    const result = await runCmi(['restore', file, '--force'], { DATABASE_URL: target.config.databaseUrl });
    assert.deepEqual([result.code, result.stdout], [1, '']);
    const copy = copiesOf(file);
    assert.equal(copy.length, 1);
    assert.equal(result.stderr.split('\n')[1], `cmi: cannot restore ${file}: its table users has a column "is_root" that cmi's schema ${String((backup.header.migrations as string[]).at(-1))} does not: it was not written by cmi backup; nothing was changed (the backup of the database taken first is at ${join(dir, copy[0]!)})`);
    assert.equal(await contents(target.config.databaseUrl), held);
    rmSync(join(dir, copy[0]!));
  });

  it('killed with SIGKILL part-way through --force, the restore leaves the target as it was', async () => {
    // A backup whose load takes a while: many rows of a table no other refers to.
    const backup = parse(good);
    const gone = backup.tables.find((t) => t.table === 'webhook_gone_urls')!;
    for (let i = 0; i < 60_000; i++) gone.rows.push([`https://gone.example.com/${i}`, '2026-01-01T00:00:00.000Z']);
    const file = join(dir, 'big.backup');
    write(file, backup);
    const name = `cmi-restore-kill-${randomBytes(4).toString('hex')}`;
    // On PostgreSQL its connections carry a name of their own, so the test sees its inserts begin.
    const url = onPostgres ? `${target.config.databaseUrl}&application_name=${name}` : target.config.databaseUrl;
    const child = spawnCmi(['restore', file, '--force'], { DATABASE_URL: url });
    let stderr = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    // The copy of the target is written inside the restore's transaction, before its first drop.
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        if (/^Backed up .*, checked\n/.test(stderr)) resolve();
      });
      void exited.then(() => reject(new Error(`cmi restore ended before it copied the target: ${stderr}`)));
    });
    if (onPostgres) {
      // The load has begun: the restore's connection has sent an insert of the big table.
      const client = new pg.Client({ connectionString: target.config.databaseUrl });
      await client.connect();
      try {
        await eventually(async () => {
          const { rows } = await client.query(`select 1 from pg_stat_activity where application_name = $1 and query like 'insert into "webhook_gone_urls"%'`, [name]);
          assert.equal(rows.length, 1, 'the load has begun');
        }, 20_000, 5);
      } finally {
        await client.end();
      }
    }
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    assert.doesNotMatch(stderr, /Restored/);
    assert.equal(await contents(target.config.databaseUrl), held);
    const copies = copiesOf(file);
    assert.equal(copies.length, 1);
    rmSync(join(dir, copies[0]!));
  });

  it('a restore of a mistyped path or a folder: one line, exit 1, no database file created, nothing changed', async () => {
    const missing = join(dir, 'no-such.backup');
    const newDatabase = join(dir, 'never', 'cmi.sqlite3');
    for (const url of [target.config.databaseUrl, `sqlite:${newDatabase}`]) {
      const result = await runCmi(['restore', missing], { DATABASE_URL: url });
      assert.deepEqual(result, { code: 1, stdout: '', stderr: `cmi: cannot restore ${missing}: there is no such file: check the path; nothing was changed\n` });
      const folder = await runCmi(['restore', dir, '--force'], { DATABASE_URL: url });
      assert.deepEqual(folder, { code: 1, stdout: '', stderr: `cmi: cannot restore ${dir}: it is a folder, not a backup file: give the path of a file cmi backup wrote; nothing was changed\n` });
    }
    assert.equal(existsSync(join(dir, 'never')), false);
    assert.equal(await contents(target.config.databaseUrl), held);
  });

  it('a backup into a missing folder or onto a folder: one line, exit 1, nothing created', async () => {
    const before = readdirSync(dir).sort();
    const inMissing = join(dir, 'missing', 'cmi.backup');
    const missing = await runCmi(['backup', inMissing], { DATABASE_URL: source.config.databaseUrl });
    assert.deepEqual(missing, { code: 1, stdout: '', stderr: `cmi: cannot write a backup to ${inMissing}: there is no folder ${join(dir, 'missing')}: create it first, or give a path in a folder that exists\n` });
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    const onFolder = await runCmi(['backup', folder], { DATABASE_URL: source.config.databaseUrl });
    assert.deepEqual(onFolder, { code: 1, stdout: '', stderr: `cmi: cannot write a backup to ${folder}: it is a folder: give the path of a file in it, e.g. ${join(folder, 'cmi.backup')}\n` });
    assert.deepEqual(readdirSync(folder), []);
    rmSync(folder, { recursive: true });
    assert.deepEqual(readdirSync(dir).sort(), before);
  });
});
