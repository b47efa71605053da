import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Every change to users or infrastructure errors reaches the other processes, so each drops its
 * cached reads at once: PostgreSQL notifies a channel (dialects/postgres.ts); SQLite needs nothing
 * (dialects/sqlite.ts). docs/architecture.md shows the whole path.
 */
export function changeNotificationsMigration(dialect: Dialect) {
  return {
    up: (db: Kysely<unknown>) => dialect.createChangeNotifications(db, ['users', 'infrastructure_errors'], 'users'),
  };
}
