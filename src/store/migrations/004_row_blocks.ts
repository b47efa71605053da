import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * `row_blocks`: how many rows of `users` each block of ids holds, at two sizes: 1,024 ids
 * (block = id >> 10) and 32,768 ids (block = id >> 15, 32 small blocks). Triggers in the database
 * keep both exact, so every process and the CLI read the same figures. X-Total is then a sum over
 * n/32768 rows, and a page seek finds its block of 1,024 by reading about n/32768 + 32 rows instead
 * of skipping `offset` users (see usersRepository.page). Two sizes, because a running sum over
 * n/1024 rows alone costs about 1 ms at 1,000,000 users on SQLite here, about what a whole page
 * request costs at 1,000 users.
 * Every trigger adds a signed count to a block (an upsert), so concurrent writers never conflict
 * over what a block holds, only wait for each other's row lock.
 */
export function rowBlocksMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // kysely runs PostgreSQL migrations in a transaction, but not SQLite ones (its SqliteAdapter has
      // supportsTransactionalDdl false). Without one, a row another process inserts between the
      // triggers and the backfill would be counted twice, or, the other way round, not at all.
      if (dialect === 'sqlite') await db.transaction().execute((trx) => createSqliteRowBlocks(trx));
      else await createPostgresRowBlocks(db);
    },
  };
}

/** The trigger statement that adds `delta` to the blocks of both sizes holding `id` (`new.id` or `old.id`). */
const sqliteAddToBlocks = (id: string, delta: number) => sql.raw(`
  insert into row_blocks (table_name, block_size, block, row_count)
    values ('users', 1024, ${id} >> 10, ${delta}), ('users', 32768, ${id} >> 15, ${delta})
    on conflict (table_name, block_size, block) do update set row_count = row_count + excluded.row_count;`);

/**
 * SQLite's first statement here (create table) takes the database's one write lock, held until the
 * transaction commits: no other process writes between the triggers and the backfill.
 */
async function createSqliteRowBlocks(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'sqlite');
  await sql`create trigger users_row_blocks_insert after insert on users begin ${sqliteAddToBlocks('new.id', 1)} end`.execute(db);
  await sql`create trigger users_row_blocks_delete after delete on users begin ${sqliteAddToBlocks('old.id', -1)} end`.execute(db);
  // cmi never changes an id, but a hand-made update must not leave the blocks wrong.
  await sql`
    create trigger users_row_blocks_move after update of id on users when old.id <> new.id begin
      ${sqliteAddToBlocks('old.id', -1)}
      ${sqliteAddToBlocks('new.id', 1)}
    end`.execute(db);
  await backfill(db);
}

/** The trigger statement that adds `count` (an aggregate) to the blocks of both sizes holding the ids in `rows`. */
const postgresAddToBlocks = (rows: string, count: string) => sql.raw(`
  insert into row_blocks (table_name, block_size, block, row_count)
    select TG_TABLE_NAME, 1024, id >> 10, ${count} from ${rows} group by id >> 10
    union all
    select TG_TABLE_NAME, 32768, id >> 15, ${count} from ${rows} group by id >> 15
    order by 2, 3
    on conflict (table_name, block_size, block) do update set row_count = row_blocks.row_count + excluded.row_count;`);

/**
 * PostgreSQL: statement triggers with transition tables, so a bulk insert costs one upsert per block
 * it touches, not one per row. Blocks are upserted in (size, block) order, so concurrent statements
 * lock them in one order and cannot deadlock on them. `create trigger` locks users against writes
 * until the migration commits and waits for writers already running, so the backfill after it sees
 * every row inserted before the triggers existed, and nothing inserted later.
 */
async function createPostgresRowBlocks(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'postgres');
  await sql`
    create function row_blocks_added() returns trigger language plpgsql as $$
    begin ${postgresAddToBlocks('added', 'count(*)')} return null; end $$`.execute(db);
  await sql`
    create function row_blocks_removed() returns trigger language plpgsql as $$
    begin ${postgresAddToBlocks('removed', '-count(*)')} return null; end $$`.execute(db);
  // Row level: transition tables are not allowed on an `update of <column>` trigger, and without the
  // column list every update (status, API key) would pay for it. cmi never changes an id.
  await sql`
    create function row_blocks_moved() returns trigger language plpgsql as $$
    begin
      ${postgresAddToBlocks('(select old.id as id) as moved_from', '-count(*)')}
      ${postgresAddToBlocks('(select new.id as id) as moved_to', 'count(*)')}
      return null;
    end $$`.execute(db);
  await sql`
    create function row_blocks_truncated() returns trigger language plpgsql as $$
    begin
      delete from row_blocks where table_name = TG_TABLE_NAME;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger users_row_blocks_insert after insert on users
    referencing new table as added for each statement execute function row_blocks_added()`.execute(db);
  await sql`
    create trigger users_row_blocks_delete after delete on users
    referencing old table as removed for each statement execute function row_blocks_removed()`.execute(db);
  await sql`
    create trigger users_row_blocks_move after update of id on users
    for each row when (old.id <> new.id) execute function row_blocks_moved()`.execute(db);
  await sql`
    create trigger users_row_blocks_truncate after truncate on users
    for each statement execute function row_blocks_truncated()`.execute(db);
  await backfill(db);
}

/** On SQLite without rowid: the table is its primary key, so a run of blocks is read as one range. */
async function createTable(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await sql`
    create table row_blocks (
      table_name varchar(64) not null,
      block_size integer not null,
      block integer not null,
      row_count integer not null,
      primary key (table_name, block_size, block)
    ) ${sql.raw(dialect === 'sqlite' ? 'without rowid' : '')}`.execute(db);
}

async function backfill(db: Kysely<unknown>): Promise<void> {
  await sql`
    insert into row_blocks (table_name, block_size, block, row_count)
    select 'users', 1024, id >> 10, count(*) from users group by id >> 10
    union all
    select 'users', 32768, id >> 15, count(*) from users group by id >> 15`.execute(db);
}
