import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * The error list's indexes as measured on 1,000,000 errors (docs/benchmarks.md#error-list-queries-first-visits
 * and #bulk-changes-by-filter):
 * - `(reported, updated_at, id)` goes. `reported=` alone or with others walks the list's own order
 *   index and tests each error (a third or two thirds match: a page reads 40 to 75 rows), and its count
 *   is `error_counts`' row. Kept, it made marking errors reported a change of an indexed column: on
 *   PostgreSQL each changed row went to a new place with an entry in all of the table's indexes (no
 *   HOT update), and every ingestion wrote one entry more.
 * - PostgreSQL: the errors' pages are filled to 85 %, so that an update which changes no indexed
 *   column (marking reported) finds room for the new version in the same page and touches no index
 *   (a HOT update). Pages written before keep their fill until rewritten (VACUUM FULL or CLUSTER).
 */
export function errorListIndexesMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('infrastructure_errors_reported_updated_at').execute();
      await dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
        sqlite: async () => {},
        async postgres(pg) {
          await sql`alter table infrastructure_errors set (fillfactor = 85)`.execute(pg);
        },
      })(db);
    },
  };
}
