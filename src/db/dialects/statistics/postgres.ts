import { sql } from 'kysely';
import type { PlannerStatistics } from './statistics.js';

export const postgresStatistics: PlannerStatistics = {
  async refresh(db) {
    await sql`vacuum analyze`.execute(db);
  },
};
