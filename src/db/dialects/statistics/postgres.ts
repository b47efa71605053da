import { sql } from 'kysely';
import type { PlannerStatistics } from './statistics.js';

export const postgresStatistics: PlannerStatistics = {
  async refresh(db) {
    // The tables of cmi's own schema only: the database may hold other schemas (the tests' one each),
    // whose vacuum is not cmi's to wait for.
    const { rows } = await sql<{ name: string }>`select quote_ident(schemaname) || '.' || quote_ident(tablename) as name from pg_tables where schemaname = current_schema() order by tablename`.execute(db);
    if (rows.length > 0) await sql.raw(`vacuum analyze ${rows.map((row) => row.name).join(', ')}`).execute(db);
  },
};
