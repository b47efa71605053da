import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema: this reads no table of it
type AnyKysely = Kysely<any>;

/** What the database's query planner knows of the data. */
export interface PlannerStatistics {
  /** Refreshes the planner's statistics after a bulk load (what autovacuum would do soon after). */
  refresh(db: AnyKysely): Promise<void>;
}
