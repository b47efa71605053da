import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Every change to users or infrastructure errors reaches the other processes, so each drops its
 * cached reads at once: PostgreSQL notifies a channel (dialects/change-notifications/postgres.ts);
 * SQLite needs nothing (dialects/change-notifications/sqlite.ts). docs/architecture.md shows the whole path.
 */
export function changeNotificationsMigration(dialect: Dialect) {
  return {
    up: (db: Kysely<unknown>) => dialect.changeNotifications.create(db, ['users', 'infrastructure_errors'], 'users'),
  };
}
