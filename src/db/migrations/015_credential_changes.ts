import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * A change to a user (suspension, deletion, password, API key, login, role) or a revoked session, made
 * by any process or by `cmi local users ...`, reaches every other process's credential cache at once,
 * not after CMI_AUTH_CACHE_TTL: PostgreSQL notifies the users channel (the revoked sessions join
 * `users` on it), SQLite counts it in a row that a process reads when PRAGMA data_version moved
 * (dialects/change-notifications/). docs/security.md#suspend-now-means-now has the bounds.
 */
export function credentialChangesMigration(dialect: Dialect) {
  return {
    up: (db: Kysely<unknown>) => dialect.changeNotifications.createCredentialChanges(db, ['users', 'revoked_sessions']),
  };
}
