import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema (migrations see none): these read no table of it
type AnyKysely = Kysely<any>;

/** How migrations run on a database: where kysely keeps its record of them, and what is atomic. */
export interface Migrations {
  /** The schema migration bookkeeping lives in (undefined: the database's only one). */
  bookkeepingSchema(db: AnyKysely): Promise<string | undefined>;
  /**
   * Runs `build` so that no other writer sees part of it. On both databases a migration run is one
   * transaction, taken under a lock before it reads what is applied
   * (docs/operations.md#migrations-run-one-at-a-time), so this runs `build` in it; it marks where a
   * migration relies on that.
   */
  atomically(db: Kysely<unknown>, build: (trx: Kysely<unknown>) => Promise<void>): Promise<void>;
}
