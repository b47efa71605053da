import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * A change to who holds which role, to what a role grants, or to a role itself moves the credentials
 * version as a change to a user does (migration 015), so every process's credential cache drops the
 * permissions it holds at once, and on PostgreSQL the users' cached pages (which show the roles) go too
 * (docs/security.md#suspend-now-means-now).
 */
export function roleCredentialChangesMigration(dialect: Dialect) {
  return {
    up: (db: Kysely<unknown>) => dialect.changeNotifications.addCredentialChanges(db, ['roles', 'role_permissions', 'user_roles']),
  };
}
