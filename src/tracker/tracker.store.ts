import type { Database } from '../db/database.js';
import { trackerBatchStore } from './tracker-batch.store.js';
import { trackerDeletesStore } from './tracker-deletes.store.js';
import { trackerErrorStore } from './tracker-error.store.js';
import { trackerListStore } from './tracker-list.store.js';
import { trackerOverviewStore } from './tracker-overview.store.js';

/**
 * The tracker's repository: one object over its stores by concern (docs/architecture.md#tracker-stores):
 * recording reports, the list's reads, one error's reads, and deletes.
 */
export function trackerRepository(database: Database) {
  // Each store's methods, none named twice: recordBatch; list; findById, markReported, occurrences, occurrence,
  // hourlyCounts, hourlyCountsOf, breakdown; deleteById, deleteMatching, prune; the overview's
  // cloudHourlyCounts, createdSince, regressedSince, topValues.
  return {
    ...trackerBatchStore(database),
    ...trackerListStore(database),
    ...trackerErrorStore(database),
    ...trackerDeletesStore(database),
    ...trackerOverviewStore(database),
  };
}

export type TrackerRepository = ReturnType<typeof trackerRepository>;
