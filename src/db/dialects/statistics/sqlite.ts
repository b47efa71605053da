import type { PlannerStatistics } from './statistics.js';

export const sqliteStatistics: PlannerStatistics = {
  // cmi never runs ANALYZE on SQLite, so its planner keeps no statistics to refresh.
  refresh: async () => {},
};
