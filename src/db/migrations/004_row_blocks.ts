import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** SQLite: the trigger statement that adds `delta` to the blocks of both sizes holding `id` (`new.id` or `old.id`). */
const addToBlocksOfRow = (table: string, id: string, delta: number) => sql.raw(`
  insert into row_blocks (table_name, block_size, block, row_count)
    values ('${table}', 1024, ${id} >> 10, ${delta}), ('${table}', 32768, ${id} >> 15, ${delta})
    on conflict (table_name, block_size, block) do update set row_count = row_count + excluded.row_count;`);

/** PostgreSQL: the trigger statement that adds `count` (an aggregate) to the blocks of both sizes holding the ids in `rows`. */
const addToBlocksOfRows = (rows: string, count: string) => sql.raw(`
  insert into row_blocks (table_name, block_size, block, row_count)
    select TG_TABLE_NAME, 1024, id >> 10, ${count} from ${rows} group by id >> 10
    union all
    select TG_TABLE_NAME, 32768, id >> 15, ${count} from ${rows} group by id >> 15
    order by 2, 3
    on conflict (table_name, block_size, block) do update set row_count = row_blocks.row_count + excluded.row_count;`);

/**
 * `row_blocks`: how many rows of `users` each block of ids holds, at two sizes: 1,024 ids
 * (block = id >> 10) and 32,768 ids (block = id >> 15, 32 small blocks). Triggers in the database
 * (one set per database) keep both exact, so every process and the CLI read the same figures. X-Total
 * is then a sum over n/32768 rows, and a page seek finds its block of 1,024 by reading about
 * n/32768 + 32 rows instead of skipping `offset` users (see usersRepository.page). Two sizes, because
 * a running sum over n/1024 rows alone costs about 1 ms at 1,000,000 users on SQLite here, about what
 * a whole page request costs at 1,000 users.
 * Every trigger adds a signed count to a block (an upsert), so concurrent writers never conflict
 * over what a block holds, only wait for each other's row lock.
 */
export function rowBlocksMigration(dialect: Dialect) {
  /** Triggers that keep `row_blocks` exact for `table`. */
  const createRowBlockTriggers = dialect.choose<(db: Kysely<unknown>, table: string) => Promise<void>>({
    async sqlite(db, table) {
      await sql`create trigger ${sql.raw(`${table}_row_blocks_insert`)} after insert on ${sql.table(table)} begin ${addToBlocksOfRow(table, 'new.id', 1)} end`.execute(db);
      await sql`create trigger ${sql.raw(`${table}_row_blocks_delete`)} after delete on ${sql.table(table)} begin ${addToBlocksOfRow(table, 'old.id', -1)} end`.execute(db);
      // cmi never changes an id, but a hand-made update must not leave the blocks wrong.
      await sql`
        create trigger ${sql.raw(`${table}_row_blocks_move`)} after update of id on ${sql.table(table)} when old.id <> new.id begin
          ${addToBlocksOfRow(table, 'old.id', -1)}
          ${addToBlocksOfRow(table, 'new.id', 1)}
        end`.execute(db);
    },

    /**
     * Statement triggers with transition tables, so a bulk insert costs one upsert per block it
     * touches, not one per row. Blocks are upserted in (size, block) order, so concurrent statements
     * lock them in one order and cannot deadlock on them. `create trigger` locks the table against
     * writes until the migration commits and waits for writers already running, so a backfill after
     * it sees every row inserted before the triggers existed, and nothing inserted later.
     */
    async postgres(db, table) {
      await sql`
        create or replace function row_blocks_added() returns trigger language plpgsql as $$
        begin ${addToBlocksOfRows('added', 'count(*)')} return null; end $$`.execute(db);
      await sql`
        create or replace function row_blocks_removed() returns trigger language plpgsql as $$
        begin ${addToBlocksOfRows('removed', '-count(*)')} return null; end $$`.execute(db);
      // Row level: transition tables are not allowed on an `update of <column>` trigger, and without the
      // column list every update (status, API key) would pay for it. cmi never changes an id.
      await sql`
        create or replace function row_blocks_moved() returns trigger language plpgsql as $$
        begin
          ${addToBlocksOfRows('(select old.id as id) as moved_from', '-count(*)')}
          ${addToBlocksOfRows('(select new.id as id) as moved_to', 'count(*)')}
          return null;
        end $$`.execute(db);
      await sql`
        create or replace function row_blocks_truncated() returns trigger language plpgsql as $$
        begin
          delete from row_blocks where table_name = TG_TABLE_NAME;
          return null;
        end $$`.execute(db);
      const trigger = (event: string) => sql.raw(`${table}_row_blocks_${event}`);
      await sql`
        create trigger ${trigger('insert')} after insert on ${sql.table(table)}
        referencing new table as added for each statement execute function row_blocks_added()`.execute(db);
      await sql`
        create trigger ${trigger('delete')} after delete on ${sql.table(table)}
        referencing old table as removed for each statement execute function row_blocks_removed()`.execute(db);
      await sql`
        create trigger ${trigger('move')} after update of id on ${sql.table(table)}
        for each row when (old.id <> new.id) execute function row_blocks_moved()`.execute(db);
      await sql`
        create trigger ${trigger('truncate')} after truncate on ${sql.table(table)}
        for each statement execute function row_blocks_truncated()`.execute(db);
    },
  });

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Atomic, or a row another process inserts between the triggers and the backfill would be
      // counted twice, or, the other way round, not at all.
      await dialect.migrations.atomically(db, async (trx) => {
        await sql`
          create table row_blocks (
            table_name varchar(64) not null,
            block_size integer not null,
            block integer not null,
            row_count integer not null,
            primary key (table_name, block_size, block)
          ) ${sql.raw(dialect.tables.keyOrdered)}`.execute(trx);
        await createRowBlockTriggers(trx, 'users');
        await sql`
          insert into row_blocks (table_name, block_size, block, row_count)
          select 'users', 1024, id >> 10, count(*) from users group by id >> 10
          union all
          select 'users', 32768, id >> 15, count(*) from users group by id >> 15`.execute(trx);
      });
    },
  };
}
