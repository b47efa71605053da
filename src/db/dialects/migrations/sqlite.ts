import type { Migrations } from './migrations.js';

export const sqliteMigrations: Migrations = {
  // The database's only schema.
  bookkeepingSchema: () => Promise.resolve(undefined),

  /**
   * kysely runs SQLite migrations outside a transaction (its adapter has supportsTransactionalDdl
   * false), so this opens one. Its first write takes the database's one write lock until it commits.
   */
  atomically: (db, build) => db.transaction().execute(build),
};
