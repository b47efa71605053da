import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** PostgreSQL: the upsert of signed counts (dimension, value, n) into `table`, in the order of migration 028. */
const upsertOfRows = (counts: string, table: string) => `insert into ${table} as kept (dimension, value, errors)
    select dimension, value, sum(n) from (${counts}) as counts (dimension, value, n) group by dimension, value having sum(n) <> 0
    order by case when dimension in ('host', 'component') then 2 when dimension like 'host.%' or dimension like 'component.%' then 1 else 0 end, dimension, value
    on conflict (dimension, value) do update set errors = kept.errors + excluded.errors`;

/**
 * PostgreSQL only: what an update of many errors costs (docs/architecture.md#error-counts,
 * docs/benchmarks.md#bulk-changes-by-filter).
 * - The errors' pages are filled to 70 % (85 % since migration 027), so that marking a third of them
 *   reported in one statement finds room in each page for the new versions: at 85 % only about half of
 *   them were HOT updates, the others wrote an entry in every index of the errors. The errors take about
 *   a fifth more pages; pages written before keep their fill until rewritten (VACUUM FULL or CLUSTER).
 * - The counts trigger of an update reads each transition table (every column of every changed error)
 *   once into the few columns it counts, not four times.
 */
export function bulkUpdateCostsMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
        sqlite: async () => {},
        async postgres(pg) {
          await dialect.migrations.atomically(pg, async (trx) => {
            await sql`alter table infrastructure_errors set (fillfactor = 70)`.execute(trx);
            // As migration 028's: the breakdown is joined only for the errors whose state changed, found
            // by adding up each error's rows before (-1) and after (+1), an aggregate linear whatever the plan.
            const moved = (schema: string) => upsertOfRows(`
              with sides (id, reported, error_class, n) as materialized (
                select id, reported, error_class, -1 from updated_from
                union all select id, reported, error_class, 1 from updated_to
              ), states (reported, error_class, n) as (
                select reported, error_class, sum(n) from sides group by reported, error_class
              )
              select 'reported', reported::varchar, sum(n) from states group by reported
              union all select 'error_class', error_class, sum(n) from states group by error_class
              union all select 'error_class.' || reported, error_class, n from states
              union all select b.dimension || '.' || moved.reported, b.value, moved.n * count(*)
                from (select id, reported, sum(n) from sides group by id, reported having sum(n) <> 0) as moved (id, reported, n)
                join ${schema}error_breakdown as b on b.error_id = moved.id
                group by b.dimension, moved.reported, b.value, moved.n`, `${schema}error_counts`);
            await sql.raw(`create or replace function error_counts_updated() returns trigger language plpgsql as $$ begin
              if TG_TABLE_SCHEMA = current_schema() then
                ${moved('')};
              else
                execute format('${moved('<schema>.').replaceAll('%', '%%').replaceAll('<schema>.', '%1$I.').replaceAll("'", "''")}', TG_TABLE_SCHEMA);
              end if;
              return null; end $$`).execute(trx);
          });
        },
      })(db);
    },
  };
}
