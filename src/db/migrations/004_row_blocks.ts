import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * `row_blocks`: how many rows of `users` each block of ids holds, at two sizes: 1,024 ids
 * (block = id >> 10) and 32,768 ids (block = id >> 15, 32 small blocks). Triggers in the database
 * (one set per dialect) keep both exact, so every process and the CLI read the same figures. X-Total
 * is then a sum over n/32768 rows, and a page seek finds its block of 1,024 by reading about
 * n/32768 + 32 rows instead of skipping `offset` users (see usersRepository.page). Two sizes, because
 * a running sum over n/1024 rows alone costs about 1 ms at 1,000,000 users on SQLite here, about what
 * a whole page request costs at 1,000 users.
 * Every trigger adds a signed count to a block (an upsert), so concurrent writers never conflict
 * over what a block holds, only wait for each other's row lock.
 */
export function rowBlocksMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Atomic, or a row another process inserts between the triggers and the backfill would be
      // counted twice, or, the other way round, not at all.
      await dialect.atomically(db, async (trx) => {
        await sql`
          create table row_blocks (
            table_name varchar(64) not null,
            block_size integer not null,
            block integer not null,
            row_count integer not null,
            primary key (table_name, block_size, block)
          ) ${sql.raw(dialect.keyOrderedTable)}`.execute(trx);
        await dialect.createRowBlockTriggers(trx, 'users');
        await sql`
          insert into row_blocks (table_name, block_size, block, row_count)
          select 'users', 1024, id >> 10, count(*) from users group by id >> 10
          union all
          select 'users', 32768, id >> 15, count(*) from users group by id >> 15`.execute(trx);
      });
    },
  };
}
