import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * On SQLite, a write of another process to a table no cache serves (a password check's login counters,
 * a revoked session) no longer empties this process's cached users pages: every change to the tables
 * the users' pages show bumps a counter row, which a process reads when PRAGMA data_version moved, as
 * the credentials' counter of migration 015 (dialects/change-notifications/sqlite.ts). PostgreSQL needs
 * nothing: its users channel is told only of these tables' changes (migrations 003, 016, 017, 020).
 * docs/architecture.md#how-cached-pages-stay-right shows the whole path.
 */
export function usersDataChangesMigration(dialect: Dialect) {
  return {
    up: (db: Kysely<unknown>) => dialect.changeNotifications.createDataChanges(db, [
      'users', 'permissions', 'roles', 'role_permissions', 'user_roles', 'billing_buckets', 'user_groups', 'user_group_roles',
    ], 'users'),
  };
}
