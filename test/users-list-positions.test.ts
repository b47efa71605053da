import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { type Kysely, type KyselyPlugin, sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { type Database, migrateTo, migrateToLatest, openDatabase } from '../src/db/database.js';
import type { Schema } from '../src/db/schema.js';
import { type NewUser, usersRepository } from '../src/users/users.store.js';
import { createTestApp, type TestApp } from './support/app.js';
import { type FreshDatabase, freshDatabase, onPostgres } from './support/database.js';

// X-Total and pages are read through row_blocks (live users per block of 1,024 ids, migration 004);
// these tests hold them to what a full count and a plain ORDER BY id OFFSET would answer.

const AT = new Date('2026-11-20T10:00:00.000Z');

function newUsers(from: number, count: number): NewUser[] {
  return Array.from({ length: count }, (_, k) => ({
    login: `bulk${from + k}`,
    email: `bulk${from + k}@example.com`,
    password_hash: 'not-a-hash',
    first_name: 'Bulk',
    last_name: 'User',
    role_ids: [2],
    time_zone: null,
    locale: null,
  }));
}

/** Adds `count` users in statements of up to 1,000 rows, as imports and the benchmark do. */
async function createMany(database: Database, count: number): Promise<void> {
  for (let done = 0; done < count; done += 1000) {
    await usersRepository(database).createMany(newUsers(done, Math.min(1000, count - done)), AT);
  }
}

/** Adds `count` users as a cmi from before migration 016 (roles) did: the rows alone, with their `role`. */
async function createManyBeforeRoles(database: Database, count: number, from = 0): Promise<void> {
  for (let done = 0; done < count; done += 1000) {
    const rows = newUsers(from + done, Math.min(1000, count - done)).map(({ role_ids, ...user }) => ({ ...user, role: role_ids.includes(1) ? 'admin' : 'user', status: 'active', created_at: AT.toISOString(), updated_at: AT.toISOString() }));
    await database.db.insertInto('users').values(rows).execute();
  }
}

/** The ids a plain `ORDER BY id LIMIT OFFSET` answers: what every page must equal. */
async function plainPage(db: Kysely<Schema>, limit: number, offset: number): Promise<number[]> {
  const rows = await db.selectFrom('users').select('id').orderBy('id').limit(limit).offset(offset).execute();
  return rows.map((row) => Number(row.id));
}

async function plainCount(db: Kysely<Schema>): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Blocks of `size` ids that hold users, as row_blocks says and as counting the users says: `block:rows`. */
async function blocks(db: Kysely<Schema>, size = 1024): Promise<{ stored: string[]; counted: string[] }> {
  const stored = await db
    .selectFrom('row_blocks')
    .select(['block', 'row_count'])
    .where('table_name', '=', 'users')
    .where('block_size', '=', size)
    .where('row_count', '<>', 0)
    .orderBy('block')
    .execute();
  const bits = Math.log2(size);
  const counted = await db
    .selectFrom('users')
    .select((eb) => [sql<number>`id >> ${sql.lit(bits)}`.as('block'), eb.fn.countAll<number | string>().as('row_count')])
    .groupBy(sql`id >> ${sql.lit(bits)}`)
    .orderBy('block')
    .execute();
  const show = (rows: Array<{ block: number; row_count: number | string }>) => rows.map((r) => `${Number(r.block)}:${Number(r.row_count)}`);
  return { stored: show(stored), counted: show(counted) };
}

async function assertBlocksMatchUsers(db: Kysely<Schema>): Promise<void> {
  for (const size of [1024, 32768]) {
    const { stored, counted } = await blocks(db, size);
    assert.deepEqual(stored, counted, `blocks of ${size}`);
  }
}

/** X-Total and the ids of one page of GET /users.json, as the administrator. */
async function listPage(t: TestApp, page: number, perPage: number): Promise<{ total: number; ids: number[] }> {
  const res = await t.app.inject({ url: `/users.json?page=${page}&per_page=${perPage}`, headers: { authorization: t.adminAuth } });
  assert.equal(res.statusCode, 200, res.body);
  return { total: Number(res.headers['x-total']), ids: (JSON.parse(res.body) as Array<{ user: { id: number } }>).map((item) => item.user.id) };
}

const range = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, k) => first + k);

describe('GET /users across blocks of 1,024 ids', () => {
  let t: TestApp;
  // admin (1), alice (2), then 2,200 bulk users (3..2202): blocks 0 (ids 1..1023), 1 (1024..2047), 2 (2048..2202).
  before(async () => {
    t = await createTestApp();
    await createMany(t.database, 2200);
  });
  after(() => t.close());

  const list = (page: number, perPage: number) => listPage(t, page, perPage);

  /** Every page of `perPage` and the one past the last equal the plain query, and X-Total the plain count. */
  async function assertEveryPageIsPlain(perPage: number): Promise<void> {
    const total = await plainCount(t.database.db);
    const pages = Math.ceil(total / perPage);
    for (let page = 1; page <= pages + 1; page++) {
      const answer = await list(page, perPage);
      assert.equal(answer.total, total, `X-Total on page ${page}`);
      assert.deepEqual(answer.ids, await plainPage(t.database.db, perPage, (page - 1) * perPage), `page ${page} of ${perPage}`);
    }
  }

  it('counts the bulk insert into its blocks', async () => {
    assert.deepEqual((await blocks(t.database.db)).stored, ['0:1023', '1:1024', '2:155']);
    assert.deepEqual((await blocks(t.database.db, 32768)).stored, ['0:2202']);
    await assertBlocksMatchUsers(t.database.db);
  });

  it('answers X-Total and the pages that straddle ids 1024 and 2048 exactly', async () => {
    assert.deepEqual(await list(1, 10), { total: 2202, ids: range(1, 10) });
    assert.deepEqual(await list(103, 10), { total: 2202, ids: range(1021, 1030) });
    assert.deepEqual(await list(205, 10), { total: 2202, ids: range(2041, 2050) });
    assert.deepEqual(await list(2, 1000), { total: 2202, ids: range(1001, 2000) });
    assert.deepEqual(await list(3, 1000), { total: 2202, ids: range(2001, 2202) });
  });

  it('answers the last page and an empty one past it', async () => {
    assert.deepEqual(await list(221, 10), { total: 2202, ids: [2201, 2202] });
    assert.deepEqual(await list(222, 10), { total: 2202, ids: [] });
    assert.deepEqual(await list(2202, 1), { total: 2202, ids: [2202] });
    assert.deepEqual(await list(2203, 1), { total: 2202, ids: [] });
  });

  it('keeps counting a user marked deleted or suspended (still listed) and drops it when removed', async () => {
    const remove = (id: number) => t.app.inject({ method: 'DELETE', url: `/users/${id}.json`, headers: { authorization: t.adminAuth } });
    assert.equal((await remove(1500)).statusCode, 204);
    const suspend = await t.app.inject({ method: 'POST', url: '/users/1501/suspend.json', headers: { authorization: t.adminAuth } });
    assert.equal(suspend.statusCode, 200);
    assert.deepEqual(await list(150, 10), { total: 2202, ids: range(1491, 1500) });
    assert.deepEqual((await blocks(t.database.db)).stored, ['0:1023', '1:1024', '2:155']);

    assert.equal((await remove(1500)).statusCode, 204);
    assert.deepEqual(await list(150, 10), { total: 2201, ids: [...range(1491, 1499), 1501] });
    assert.deepEqual((await blocks(t.database.db)).stored, ['0:1023', '1:1023', '2:155']);
    await assertBlocksMatchUsers(t.database.db);
  });

  it('shifts pages as ORDER BY id OFFSET would after deletes in the middle of a block and of a whole block', async () => {
    const db = t.database.db;
    await db.deleteFrom('users').where('id', '>=', 500).where('id', '<=', 509).execute();
    await db.deleteFrom('users').where('id', '>=', 1024).where('id', '<=', 2047).execute();
    // Left: ids 1..499 and 510..1023 (1,013 users), then 2048..2202 (155).
    assert.deepEqual((await blocks(db)).stored, ['0:1013', '2:155']);
    await assertBlocksMatchUsers(db);
    assert.deepEqual(await list(50, 10), { total: 1168, ids: [...range(491, 499), 510] });
    assert.deepEqual(await list(102, 10), { total: 1168, ids: [1021, 1022, 1023, ...range(2048, 2054)] });
    assert.deepEqual(await list(117, 10), { total: 1168, ids: range(2195, 2202) });
    assert.deepEqual(await list(118, 10), { total: 1168, ids: [] });
    await assertEveryPageIsPlain(100);
    await assertEveryPageIsPlain(7);
  });

  it('counts users created one by one after the gaps, into a new block past the last id', async () => {
    const added = await t.addUsers(3);
    assert.deepEqual(added.map((user) => user.id), [2203, 2204, 2205]);
    assert.deepEqual((await blocks(t.database.db)).stored, ['0:1013', '2:158']);
    assert.deepEqual(await list(117, 10), { total: 1171, ids: range(2195, 2204) });
    assert.deepEqual(await list(118, 10), { total: 1171, ids: [2205] });
  });

  it('moves a user between blocks when its id is changed by hand', async () => {
    await sql`update users set id = 40000 where id = 3`.execute(t.database.db);
    assert.deepEqual((await blocks(t.database.db)).stored, ['0:1012', '2:158', '39:1']);
    assert.deepEqual((await blocks(t.database.db, 32768)).stored, ['0:1170', '1:1']);
    await assertBlocksMatchUsers(t.database.db);
    assert.deepEqual(await list(1171, 1), { total: 1171, ids: [40000] });
    await assertEveryPageIsPlain(100);
  });

  it('empties the blocks with the table', async () => {
    // PostgreSQL's TRUNCATE fires no delete trigger, only its own; SQLite has no TRUNCATE.
    await sql.raw(onPostgres ? 'truncate users cascade' : 'delete from users').execute(t.database.db);
    assert.deepEqual(await blocks(t.database.db), { stored: [], counted: [] });
    assert.equal(await usersRepository(t.database).count(), 0);
  });
});

describe('a page read while users are deleted', () => {
  // Positions 2022..2046 are the last 25 users of the block of ids 1024..2047; ids 1024 and 1025 come
  // before them in that block. Deleting those two moves every later user two places up.
  const BEFORE_DELETE = range(2023, 2047);
  const AFTER_DELETE = range(2025, 2049);
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
    await createMany(t.database, 2200);
    assert.deepEqual(await plainPage(t.database.db, 25, 2022), BEFORE_DELETE);
  });
  afterEach(() => t.close());

  const deleteTwo = (db: Kysely<Schema>) => db.deleteFrom('users').where('id', 'in', [1024, 1025]).execute();

  it('read after the delete committed is the page the delete left', async () => {
    await deleteTwo(t.database.db);
    const page = await usersRepository(t.database).page(25, 2022);
    assert.deepEqual(page.map((user) => user.id), AFTER_DELETE);
    assert.deepEqual(await plainPage(t.database.db, 25, 2022), AFTER_DELETE);
  });

  it('read while the delete commits is the page as it was before: the blocks it seeks by and the users it reads are one snapshot', async () => {
    // The delete commits, on a connection of its own, as soon as the page's first statement has
    // answered and before any other starts. A page that sought its block in one statement and read
    // the users in another would read them after the delete, run off the block's end and come back short.
    const other = openDatabase(t.config);
    try {
      let statements = 0;
      const deleteAfterFirst: KyselyPlugin = {
        transformQuery: ({ node }) => node,
        async transformResult({ result }) {
          statements += 1;
          if (statements === 1) await deleteTwo(other.db);
          return result;
        },
      };
      const page = await usersRepository({ ...t.database, db: t.database.db.withPlugin(deleteAfterFirst) }).page(25, 2022);
      assert.deepEqual(page.map((user) => user.id), BEFORE_DELETE);
      assert.deepEqual(await plainPage(t.database.db, 25, 2022), AFTER_DELETE);
    } finally {
      await other.close();
    }
  });
});

describe('GET /users across blocks of 32,768 ids', () => {
  let t: TestApp;
  // admin (1), alice (2), then users with the ids below: around 32768 and 65536 (where both block
  // sizes end) and far past them, with the blocks in between empty.
  const ids = [...range(32700, 32800), ...range(65500, 65600), ...range(1_000_000, 1_000_009)];
  before(async () => {
    t = await createTestApp();
    await t.database.db
      .insertInto('users')
      .values(newUsers(0, ids.length).map(({ role_ids, ...user }, k) => ({ ...user, role: role_ids.includes(1) ? 'admin' : 'user', id: ids[k] as number, status: 'active', created_at: AT.toISOString(), updated_at: AT.toISOString() })))
      .execute();
  });
  after(() => t.close());

  const list = (page: number, perPage: number) => listPage(t, page, perPage);

  it('counts the users into blocks of both sizes', async () => {
    assert.deepEqual((await blocks(t.database.db)).stored, ['0:2', '31:68', '32:33', '63:36', '64:65', '976:10']);
    assert.deepEqual((await blocks(t.database.db, 32768)).stored, ['0:70', '1:69', '2:65', '30:10']);
    await assertBlocksMatchUsers(t.database.db);
  });

  it('answers the pages that straddle ids 32768 and 65536, the last and the one past it exactly', async () => {
    // Positions: 0-1 are ids 1-2, 2-102 are 32700-32800, 103-203 are 65500-65600, 204-213 are 1000000-1000009.
    assert.deepEqual(await list(7, 10), { total: 214, ids: range(32758, 32767) });
    assert.deepEqual(await list(8, 10), { total: 214, ids: range(32768, 32777) });
    assert.deepEqual(await list(2, 100), { total: 214, ids: [...range(32798, 32800), ...range(65500, 65596)] });
    assert.deepEqual(await list(4, 60), { total: 214, ids: [...range(65577, 65600), ...range(1_000_000, 1_000_009)] });
    assert.deepEqual(await list(22, 10), { total: 214, ids: range(1_000_006, 1_000_009) });
    assert.deepEqual(await list(23, 10), { total: 214, ids: [] });
    assert.deepEqual(await list(1, 1000), { total: 214, ids: [1, 2, ...ids] });
  });

  it('answers as ORDER BY id OFFSET would after a whole large block is removed', async () => {
    await t.database.db.deleteFrom('users').where('id', '>=', 32768).where('id', '<', 65536).execute();
    assert.deepEqual((await blocks(t.database.db, 32768)).stored, ['0:70', '2:65', '30:10']);
    await assertBlocksMatchUsers(t.database.db);
    assert.deepEqual(await list(8, 10), { total: 145, ids: range(65536, 65545) });
    for (const perPage of [1, 7, 64, 100]) {
      for (let page = 1; page <= Math.ceil(145 / perPage) + 1; page++) {
        const expected = await plainPage(t.database.db, perPage, (page - 1) * perPage);
        assert.deepEqual(await list(page, perPage), { total: 145, ids: expected }, `page ${page} of ${perPage}`);
      }
    }
  });
});

describe('migration 004 on a database that already has users', () => {
  let fresh: FreshDatabase;
  let database: Database;
  // Each test migrates its own database from 003 on.
  beforeEach(async () => {
    fresh = await freshDatabase();
    database = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
  });
  afterEach(async () => {
    await database.close();
    await fresh.drop();
  });

  it('counts the users that were there before it into their blocks', async () => {
    await migrateTo(database, '003_change_notifications');
    await createManyBeforeRoles(database, 2100);
    await database.db.deleteFrom('users').where('id', 'in', [1, 1024, 1025, 2048]).execute();
    await migrateToLatest(database);
    assert.deepEqual((await blocks(database.db)).stored, ['0:1022', '1:1022', '2:52']);
    await assertBlocksMatchUsers(database.db);
    const users = usersRepository(database);
    assert.equal(await users.count(), 2096);
    assert.deepEqual((await users.page(5, 1020)).map((user) => user.id), [1022, 1023, 1026, 1027, 1028]);
    assert.deepEqual((await users.page(5, 2042)).map((user) => user.id), [2046, 2047, 2049, 2050, 2051]);
  });

  const onlyPostgres = { skip: !onPostgres && 'SQLite runs one writer at a time: the migration holds the write lock throughout' };
  it('counts a user inserted by another process in a transaction open when the migration began exactly once (PostgreSQL)', onlyPostgres, async () => {
    await migrateTo(database, '003_change_notifications');
    await createManyBeforeRoles(database, 1030);

    const writer = new pg.Client({ connectionString: fresh.url });
    await writer.connect();
    try {
      await writer.query('begin');
      await writer.query(
        `insert into users (login, email, password_hash, status, role, created_at, updated_at)
         values ('late', 'late@example.com', 'x', 'active', 'user', '2026-11-20T10:00:00.000Z', '2026-11-20T10:00:00.000Z')`,
      );
      const migrating = migrateTo(database, '004_row_blocks');
      // The migration's `create trigger` waits for the open insert: proceed once it is waiting.
      const observer = new pg.Client({ connectionString: fresh.url });
      await observer.connect();
      try {
        for (;;) {
          const { rows } = await observer.query<{ n: string }>(
            "select count(*) as n from pg_locks where not granted and relation = 'users'::regclass",
          );
          if (rows[0]?.n !== '0') break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      } finally {
        await observer.end();
      }
      await writer.query('commit');
      await migrating;
    } finally {
      await writer.end();
    }
    await createManyBeforeRoles(database, 1, 5000);
    assert.deepEqual((await blocks(database.db)).stored, ['0:1023', '1:9']);
    await assertBlocksMatchUsers(database.db);
  });
});
