import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Every change to the error tracker reaches the other processes on a channel of its own, so each drops
 * its cached tracker pages at once while a storm of reports leaves the users pages alone: PostgreSQL
 * notifies `cmi_tracker_changed` (dialects/change-notifications/postgres.ts); SQLite needs nothing
 * (dialects/change-notifications/sqlite.ts). docs/architecture.md#how-cached-pages-stay-right shows
 * the whole path.
 */
export function trackerChangeNotificationsMigration(dialect: Dialect) {
  return {
    up: (db: Kysely<unknown>) =>
      dialect.changeNotifications.create(db, ['infrastructure_errors', 'error_counts', 'error_occurrences', 'error_histogram', 'error_breakdown'], 'tracker'),
  };
}
