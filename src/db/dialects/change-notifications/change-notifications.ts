import type { Kysely } from 'kysely';
import type { CachedData } from './write-counter.js';

/**
 * For each kind of cached data, a token that changes whenever that data changes, from this process or
 * any other, read without waiting; undefined where the database offers no such signal now (then
 * nothing is cached). A token may also move when something else changed, never stay when it did.
 */
export type DataVersions = Record<CachedData, () => string | undefined> & {
  /**
   * Moves when another process (or `cmi local users ...`) changed a user or revoked a session, read
   * afresh on every call, so a change committed before the call is seen by it where the database
   * allows (docs/security.md#suspend-now-means-now); undefined while no such signal is trustworthy.
   * This process's own changes are not in it: its credential cache drops them itself.
   */
  credentials: () => string | undefined;
  /**
   * Settles once `credentials()` shows every change committed before this call: a promise where
   * changes arrive asynchronously (PostgreSQL's notifications), undefined where `credentials()` is
   * already exact (SQLite) or there is no signal to wait for.
   */
  credentialsHeard: () => Promise<void> | undefined;
};

/**
 * How a process learns that another changed cached data (docs/architecture.md#how-cached-pages-stay-right).
 * On opening, each database's data versions: other processes' changes (sqlite.ts: PRAGMA data_version;
 * postgres.ts: LISTEN) with this process's own writes (write-counter.ts, the same on both); here,
 * what migrations create for them: PostgreSQL's notifying triggers, nothing on SQLite.
 */
export interface ChangeNotifications {
  /** Migrations 003 and 011: every change to `tables` tells the other processes that `data` changed (nothing where they can see it themselves). */
  create(db: Kysely<unknown>, tables: readonly string[], data: CachedData): Promise<void>;
  /** Migration 006: changes to `tables` no longer tell the other processes (nothing caches them). */
  drop(db: Kysely<unknown>, tables: readonly string[]): Promise<void>;
  /** Migration 012 (and `create`): the function that notifies of changes to `data`, made anew. */
  createFunction(db: Kysely<unknown>, data: CachedData): Promise<void>;
  /**
   * Migration 015: every change to `tables` (the users, the revoked sessions) moves the credentials
   * version of the other processes (DataVersions.credentials), so their credential caches drop what
   * they verified: PostgreSQL notifies the users channel; SQLite bumps a counter row that a process
   * reads when PRAGMA data_version says another one wrote.
   */
  createCredentialChanges(db: Kysely<unknown>, tables: readonly string[]): Promise<void>;
  /**
   * Migrations 019 and 021: more `tables` (the roles and what they grant; the API keys) move the
   * credentials version too. With `updateOf`, an update moves it only when it sets one of those
   * columns (an API key's `last_used_at` changes no credential).
   */
  addCredentialChanges(db: Kysely<unknown>, tables: readonly string[], updateOf?: readonly string[]): Promise<void>;
  /**
   * Migration 030: every change to `tables` bumps `data`'s counter row on SQLite, read when PRAGMA
   * data_version says another process wrote, so a write to any other table (a login counter) leaves
   * `data`'s version where it was. Nothing on PostgreSQL, whose channels already tell `data` apart.
   */
  createDataChanges(db: Kysely<unknown>, tables: readonly string[], data: CachedData): Promise<void>;
}
