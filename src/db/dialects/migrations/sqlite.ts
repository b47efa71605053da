import type { Migrations } from './migrations.js';

export const sqliteMigrations: Migrations = {
  // The database's only schema.
  bookkeepingSchema: () => Promise.resolve(undefined),

  /**
   * The whole migration run is already one transaction (connection/sqlite.ts, SqliteMigratingAdapter),
   * begun with `begin immediate`: it holds the write lock until every pending migration is recorded.
   */
  atomically: (db, build) => build(db),
};
