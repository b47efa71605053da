import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import SQLite from 'better-sqlite3';
import { openDatabase } from '../src/db/database.js';
import { startServer } from './support/cli.js';
import { eventually } from './support/eventually.js';

const POOL = { size: 1, statementTimeoutMs: 5000 };

/** A SQLite file's path in a temp dir of the test's own, removed after it (freshDatabase follows DATABASE_URL; these tests are SQLite's). */
function sqlitePath(t: TestContext, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'cmi-checkpointer-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, name);
}

/** Writes about 2 MB (500 pages) in one transaction: far below the serving connection's own checkpoint limit (10,000 pages). */
async function write(database: ReturnType<typeof openDatabase>): Promise<void> {
  await sql`create table filler (id integer primary key, body text not null)`.execute(database.db);
  await sql`with recursive n(k) as (select 1 union all select k + 1 from n where k < 500) insert into filler (body) select printf('%.4000c', 'x') from n`.execute(database.db);
}

describe('SQLite checkpoints of a serving connection', () => {
  it('are made by the checkpointer thread: the database file takes in what the WAL held, and closing leaves no WAL behind', async (t) => {
    const path = sqlitePath(t, 'serving.sqlite3');
    const database = openDatabase({ databaseUrl: `sqlite:${path}`, pool: POOL }, { serving: true });
    await sql`select 1`.execute(database.db);
    const before = statSync(path).size;
    await write(database);
    // The serving connection would copy nothing before 10,000 pages: the file grows by the thread's checkpoints alone.
    await eventually(() => assert.ok(statSync(path).size >= before + 500 * 4096, `the database file is ${statSync(path).size} bytes, from ${before}`));
    // A connection of its own, as another process would read the file.
    const reader = new SQLite(path, { fileMustExist: true });
    assert.deepEqual(reader.prepare('select count(*) as n from filler').get(), { n: 500 });
    reader.close();
    await database.close();
    assert.equal(existsSync(`${path}-wal`), false);
  });

  it('are not started for a connection that does not serve (a command): the WAL keeps what it holds until its own limit', async (t) => {
    const path = sqlitePath(t, 'command.sqlite3');
    const database = openDatabase({ databaseUrl: `sqlite:${path}`, pool: POOL });
    await sql`select 1`.execute(database.db);
    const before = statSync(path).size;
    await write(database);
    // The control of the test above: several of the thread's turns (250 ms) pass, and nothing copies the WAL.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(statSync(path).size, before);
    assert.ok(statSync(`${path}-wal`).size >= 500 * 4096, 'the WAL holds the writes');
    await database.close();
  });

  it('are made for `cmi serve`: while it serves, the database file holds what its start-up wrote; stopped, no WAL is left', async (t) => {
    const path = sqlitePath(t, 'served.sqlite3');
    const server = await startServer({ DATABASE_URL: `sqlite:${path}`, CMI_ADMIN_PASSWORD: '' });
    try {
      // The migrations' tables and the administrator went to the WAL; a file of one page has taken in none of them.
      await eventually(() => assert.ok(statSync(path).size > 100 * 4096, `the database file is ${statSync(path).size} bytes`));
    } finally {
      assert.equal(await server.stop(), 0);
    }
    assert.equal(existsSync(`${path}-wal`), false);
  });
});
