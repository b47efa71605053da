import type { Database } from '../db/database.js';
import { trackerBatchStore } from './tracker-batch.store.js';
import { trackerDeletesStore } from './tracker-deletes.store.js';
import { trackerErrorStore } from './tracker-error.store.js';
import { trackerListStore } from './tracker-list.store.js';

/**
 * The tracker's repository: the only SQL of the tracker's tables but the triage's (triage.store.ts),
 * one object over its stores by concern (docs/architecture.md#tracker-stores): recording
 * reports, the list's reads, one error's reads, and deletes.
 */
export function trackerRepository(database: Database) {
  const batch = trackerBatchStore(database);
  const lists = trackerListStore(database);
  const one = trackerErrorStore(database);
  const deletes = trackerDeletesStore(database);
  return {
    recordBatch: batch.recordBatch,
    findById: one.findById,
    list: lists.list,
    markReported: one.markReported,
    deleteById: deletes.deleteById,
    deleteMatching: deletes.deleteMatching,
    occurrences: one.occurrences,
    hourlyCounts: one.hourlyCounts,
    hourlyCountsOf: one.hourlyCountsOf,
    breakdown: one.breakdown,
    prune: deletes.prune,
  };
}

export type TrackerRepository = ReturnType<typeof trackerRepository>;
