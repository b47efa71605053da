import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Each process keeps the enabled alert rules and their destinations in memory for the batches it
 * counts (alerts/planner.ts), while nothing changed them in any process: every change to the rules,
 * the destinations and their links notifies `cmi_alerts_changed` on PostgreSQL
 * (dialects/change-notifications/postgres.ts); SQLite needs nothing (PRAGMA data_version).
 * docs/architecture.md#how-cached-pages-stay-right shows the whole path.
 */
export function alertRuleChangesMigration(dialect: Dialect) {
  return {
    up: (db: Kysely<unknown>) => dialect.changeNotifications.create(db, ['alert_rules', 'alert_destinations', 'alert_rule_destinations'], 'alerts'),
  };
}
