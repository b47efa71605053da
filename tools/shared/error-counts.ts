import { type Kysely, sql } from 'kysely';
import type { Schema } from '../../src/db/schema.js';

type CountRow = { dimension: string; value: string; errors: number | string };
const line = (row: CountRow) => `${row.dimension}:${row.value}:${Number(row.errors)}`;

/**
 * error_counts as stored (rows of 0 left out), and as counted from the errors and their breakdown rows,
 * with the pairs of each with the error's state (migration 028) and the triage's by status and assignee (migration 031;
 * docs/architecture.md#error-counts), each as sorted `dimension:value:errors` lines: equal when exact.
 */
export async function errorCountsAgainstRows(db: Kysely<Schema>): Promise<{ stored: string[]; counted: string[] }> {
  const stored = await db.selectFrom('error_counts').select(['dimension', 'value', 'errors']).where('errors', '<>', 0).orderBy('dimension').orderBy('value').execute();
  const counted = await sql<CountRow>`
    select 'all' as dimension, '' as value, count(*) as errors from infrastructure_errors having count(*) > 0
    union all select 'reported', cast(reported as varchar(255)), count(*) from infrastructure_errors group by reported
    union all select 'error_class', error_class, count(*) from infrastructure_errors group by error_class
    union all select dimension, value, count(*) from error_breakdown group by dimension, value
    union all select 'error_class.' || reported, error_class, count(*) from infrastructure_errors group by reported, error_class
    union all select b.dimension || '.' || e.reported, b.value, count(*) from error_breakdown as b join infrastructure_errors as e on e.id = b.error_id
      group by b.dimension, e.reported, b.value
    union all select 'triage.' || triage_status, coalesce(cast(assignee_id as varchar(255)), ''), count(*) from error_triage group by triage_status, assignee_id
    order by 1, 2`.execute(db);
  return { stored: stored.map(line), counted: counted.rows.map(line) };
}
