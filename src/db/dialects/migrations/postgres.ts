import { sql } from 'kysely';
import type { Migrations } from './migrations.js';

export const postgresMigrations: Migrations = {
  /** The connection's current schema, named explicitly: kysely would otherwise take such tables in any schema as its own. */
  async bookkeepingSchema(db) {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    return rows[0]?.schema;
  },

  // kysely already runs each PostgreSQL migration in a transaction.
  atomically: (db, build) => build(db),
};
