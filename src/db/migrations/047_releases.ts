import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Releases (docs/search.md#releases): what each error's occurrences said of their release,
 * environment, level and tags is kept in its breakdown beside its hosts (facets), so:
 * - `error_breakdown.first_seen_at`: the first occurrence of each value, beside its last (null on rows
 *   written before this migration, which were hosts and components only);
 * - PostgreSQL: `error_breakdown.dimension` and `error_counts.dimension` widened for `tag.<name>` (a
 *   name is at most 32 characters; the counts' pairs append `.false`); SQLite does not bound a varchar;
 * - `error_triage.resolved_in_release`: an error resolved "in release R" (or in the next one after R)
 *   regresses only on an occurrence of a later release;
 * - `releases`: every release seen or declared, its first occurrence across the errors, how many
 *   errors it brought (their first occurrence carried it) and how many regressions it caused, kept by
 *   the batch that counts the occurrences (tracker/tracker-batch.store.ts), exact like the counters.
 */
export function releasesMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('error_breakdown').addColumn('first_seen_at', 'varchar(32)').execute();
      await dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
        sqlite: () => Promise.resolve(),
        async postgres(db) {
          await sql`alter table error_breakdown alter column dimension type varchar(40)`.execute(db);
          await sql`alter table error_counts alter column dimension type varchar(48)`.execute(db);
        },
      })(db);
      await db.schema.alterTable('error_triage').addColumn('resolved_in_release', 'varchar(255)').execute();
      await db.schema.createTable('releases')
        .addColumn('name', 'varchar(255)', (c) => c.primaryKey())
        .addColumn('first_seen_at', 'varchar(32)')
        .addColumn('declared_at', 'varchar(32)')
        .addColumn('errors_new', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('regressions', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
