import { sql } from 'kysely';
import type { Migrations } from './migrations.js';

export const postgresMigrations: Migrations = {
  /** The connection's current schema, named explicitly: kysely would otherwise take such tables in any schema as its own. */
  async bookkeepingSchema(db) {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    return rows[0]?.schema;
  },

  // kysely runs the whole migration run in one transaction, under its advisory lock.
  atomically: (db, build) => build(db),
};
