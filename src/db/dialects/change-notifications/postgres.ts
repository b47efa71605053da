import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import type { CachedData, WriteCounter } from './write-counter.js';
import type { ChangeNotifications, DataVersions } from './change-notifications.js';
import { CHANGE_CHANNELS, changeListener } from './postgres-listener.js';

/** The trigger function and trigger-name suffix that notify changes to each kind of cached data (migrations 003, 011, 012). */
const NOTIFIERS: Record<CachedData, { functionName: string; triggerSuffix: string }> = {
  users: { functionName: 'cmi_data_changed', triggerSuffix: 'changed' },
  tracker: { functionName: 'cmi_tracker_changed', triggerSuffix: 'tracker_changed' },
  alerts: { functionName: 'cmi_alerts_changed', triggerSuffix: 'alerts_changed' },
};

/**
 * The trigger function behind `create`. The payload is the changed table's schema
 * (TG_TABLE_SCHEMA), which listeners compare with their own: a write from a session whose
 * search_path differs (psql as a DBA) is still heard. Before migration 012 it sent the writer's
 * current_schema().
 */
async function createNotifyFunction(db: Kysely<unknown>, data: CachedData): Promise<void> {
  const { functionName } = NOTIFIERS[data];
  await sql`
        create or replace function ${sql.raw(functionName)}() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${sql.lit(CHANGE_CHANNELS[data])}, TG_TABLE_SCHEMA);
          return null;
        end $$`.execute(db);
}

/** A statement trigger on `table` that runs the notifier of `data` (on an update only of `updateOf`'s columns, when given). */
async function createNotifyTrigger(db: Kysely<unknown>, table: string, data: CachedData, updateOf?: readonly string[]): Promise<void> {
  const { functionName, triggerSuffix } = NOTIFIERS[data];
  const update = updateOf === undefined ? sql.raw('update') : sql`update of ${sql.join(updateOf.map((column) => sql.ref(column)))}`;
  await sql`
      create trigger ${sql.raw(`${table}_${triggerSuffix}`)}
      after insert or ${update} or delete or truncate on ${sql.table(table)}
      for each statement execute function ${sql.raw(functionName)}()`.execute(db);
}

export const postgresChangeNotifications: ChangeNotifications = {
  /**
   * Every statement that changes one of `tables` notifies the channel of `data` (CHANGE_CHANNELS) with
   * the schema as payload. PostgreSQL folds the same notification sent again in one transaction into
   * one, so a batch of error reports is one notification however many statements it runs.
   */
  async create(db, tables, data) {
    await createNotifyFunction(db, data);
    for (const table of tables) await createNotifyTrigger(db, table, data);
  },

  /**
   * The credential caches listen on the users channel: each of `tables` gets its notifying trigger
   * (made anew where it has one, as `users` has since migration 003).
   */
  async createCredentialChanges(db, tables) {
    await postgresChangeNotifications.addCredentialChanges(db, tables);
  },

  // The same: the users channel is the credentials' signal (the roles' tables notify it since migration 016).
  async addCredentialChanges(db, tables, updateOf) {
    for (const table of tables) {
      await sql`drop trigger if exists ${sql.raw(`${table}_${NOTIFIERS.users.triggerSuffix}`)} on ${sql.table(table)}`.execute(db);
      await createNotifyTrigger(db, table, 'users', updateOf);
    }
  },

  createFunction: createNotifyFunction,

  // Each kind has its own channel, told only of its own tables' changes: nothing to count.
  createDataChanges: async () => {},

  async drop(db, tables) {
    for (const table of tables) await sql`drop trigger if exists ${sql.raw(`${table}_changed`)} on ${sql.table(table)}`.execute(db);
  },
};

/**
 * The data versions on PostgreSQL: other processes' changes as counted by one listening connection
 * (postgres-listener.ts, through `driver`, the pg module the pool uses), connected on first use:
 * commands that only write (migrate, users ...) never listen. `close` ends the listening.
 */
export function postgresDataVersions(
  url: string,
  writes: WriteCounter,
  driver: typeof pg,
  listening: { statementTimeoutMs: number; ownBackends: ReadonlySet<number> },
): { dataVersions: DataVersions; close: () => Promise<void> } {
  let listener: ReturnType<typeof changeListener> | undefined;
  return {
    dataVersions: {
      users: () => {
        listener ??= changeListener(url, driver, listening);
        const changes = listener.version('users');
        return changes === undefined ? undefined : `${changes}:${writes.counts.users}`;
      },
      tracker: () => {
        listener ??= changeListener(url, driver, listening);
        const changes = listener.version('tracker');
        return changes === undefined ? undefined : `${changes}:${writes.counts.tracker}`;
      },
      alerts: () => {
        listener ??= changeListener(url, driver, listening);
        const changes = listener.version('alerts');
        return changes === undefined ? undefined : `${changes}:${writes.counts.alerts}`;
      },
      // Other processes' changes only, as heard on the users channel (migration 015 puts the revoked
      // sessions on it): delivered after their commit, asynchronously (docs/security.md#suspend-now-means-now); credentialsHeard waits for it.
      credentials: () => {
        listener ??= changeListener(url, driver, listening);
        const changes = listener.othersCredentialChanges();
        return changes === undefined ? undefined : String(changes);
      },
      // A notification is delivered after its commit, asynchronously: one round trip on the listening
      // connection makes sure every change committed before the call has been heard.
      credentialsHeard: () => listener?.heard(),
    },
    close: async () => {
      await listener?.close();
    },
  };
}
