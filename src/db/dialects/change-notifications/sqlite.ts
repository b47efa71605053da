import type SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import type { CachedData, WriteCounter } from './write-counter.js';
import type { ChangeNotifications, DataVersions } from './change-notifications.js';

/** How stale this process's view of other processes' writes may get, in milliseconds. */
const OTHER_PROCESS_CHECK_MS = 1;

/**
 * Counts changes to credentials (migration 015) in its one row, bumped by triggers, so a process that
 * sees PRAGMA data_version move (another process wrote something) can tell whether that was a change
 * to credentials without reading the users.
 */
const CREDENTIAL_CHANGES = 'credential_changes';

/**
 * Counts changes to the tables a kind of cached data shows (migration 030: the users'), one row a kind,
 * bumped by triggers: a process that sees PRAGMA data_version move reads it to tell a change to that
 * data from a write to anything else (another process's login counters).
 */
const DATA_CHANGES = 'data_changes';

/** Other processes read PRAGMA data_version (sqliteDataVersions): nothing to create, but the credentials' counter. */
export const sqliteChangeNotifications: ChangeNotifications = {
  create: async () => {},
  createFunction: async () => {},
  drop: async () => {},
  async createCredentialChanges(db, tables) {
    await sql`create table ${sql.table(CREDENTIAL_CHANGES)} (id integer primary key check (id = 1), changes integer not null)`.execute(db);
    await sql`insert into ${sql.table(CREDENTIAL_CHANGES)} (id, changes) values (1, 0)`.execute(db);
    await sqliteChangeNotifications.addCredentialChanges(db, tables);
  },
  async createDataChanges(db, tables, data) {
    await sql`create table if not exists ${sql.table(DATA_CHANGES)} (kind text primary key, changes integer not null)`.execute(db);
    await sql`insert into ${sql.table(DATA_CHANGES)} (kind, changes) values (${data}, 0)`.execute(db);
    for (const table of tables) {
      for (const event of ['insert', 'update', 'delete']) {
        await sql`
          create trigger ${sql.raw(`${table}_${data}_changes_${event}`)} after ${sql.raw(event)} on ${sql.table(table)}
          begin update ${sql.table(DATA_CHANGES)} set changes = changes + 1 where kind = ${sql.lit(data)}; end`.execute(db);
      }
    }
  },
  async addCredentialChanges(db, tables, updateOf) {
    const update = updateOf === undefined ? 'update' : `update of ${updateOf.map((column) => `"${column}"`).join(', ')}`;
    for (const table of tables) {
      const events: ReadonlyArray<readonly [string, string]> = [['insert', 'insert'], ['update', update], ['delete', 'delete']];
      for (const [event, when] of events) {
        await sql`
          create trigger ${sql.raw(`${table}_credentials_${event}`)} after ${sql.raw(when)} on ${sql.table(table)}
          begin update ${sql.table(CREDENTIAL_CHANGES)} set changes = changes + 1 where id = 1; end`.execute(db);
      }
    }
  },
};

/** The data versions of the database `sqlite` has open (connection/sqlite.ts, on opening). */
export function sqliteDataVersions(sqlite: SQLite.Database, writes: WriteCounter): DataVersions {
  // PRAGMA data_version moves when another connection (process) commits. Reading it takes file-lock
  // system calls, so it is read at most once a millisecond: another process's write is seen within
  // 1 ms; this process's own writes are counted by `writes` at once.
  const otherWrites = sqlite.prepare('PRAGMA data_version').pluck();
  let other = 0;
  let checkedAt = -Infinity;
  /** Another process's writes, whatever they changed; undefined while unreadable. */
  const othersCount = (): number | undefined => {
    const now = performance.now();
    if (now - checkedAt >= OTHER_PROCESS_CHECK_MS) {
      try {
        other = otherWrites.get() as number;
      } catch {
        // Unreadable for now (another process holds the database exclusively): cache nothing.
        return undefined;
      }
      checkedAt = now;
    }
    return other;
  };
  /**
   * What other processes changed of `data`: with a counter row (migration 030), the row, read only when
   * PRAGMA data_version moved (so another process's write elsewhere leaves it); without one (the tracker,
   * the alert rules, whose tables every batch of reports writes), PRAGMA data_version itself. Undefined
   * while unreadable. Read in that order, a change committed between the two reads is seen now or on
   * the next call, never missed. The row's count is given as `-1 - changes`: never a value PRAGMA
   * data_version takes (a positive one), so the version moves when the one stands in for the other.
   */
  const othersChangesOf = (data: CachedData, counted: boolean) => {
    let counter: SQLite.Statement | undefined;
    let countedAt: number | undefined;
    let changes = 0;
    return (): number | undefined => {
      const others = othersCount();
      if (others === undefined || !counted) return others;
      if (others === countedAt) return changes;
      try {
        // Prepared on first use: the row exists once migration 030 ran; before, PRAGMA data_version stands in.
        counter ??= sqlite.prepare(`select changes from ${DATA_CHANGES} where kind = ?`).pluck();
        const row = counter.get(data) as number | undefined;
        if (row === undefined) return others;
        changes = -1 - row;
      } catch {
        counter = undefined;
        return others;
      }
      countedAt = others;
      return changes;
    };
  };
  const versionOf = (data: CachedData, counted: boolean) => {
    const othersChanges = othersChangesOf(data, counted);
    // The version string is made again only when a count moved, not on every call.
    let version = '';
    let versionOther = -1;
    let versionOwn = -1;
    return (): string | undefined => {
      const others = othersChanges();
      if (others === undefined) return undefined;
      if (versionOther !== others || versionOwn !== writes.counts[data]) {
        versionOther = others;
        versionOwn = writes.counts[data];
        version = `${others}:${versionOwn}`;
      }
      return version;
    };
  };
  // The credentials' version: a credential change that another process committed at least
  // OTHER_PROCESS_CHECK_MS before this call is seen by it (docs/security.md#suspend-now-means-now).
  // PRAGMA data_version first (at most once a millisecond: read on every request it cost a third of
  // the throughput of a cached request), the counter row only when it moved; in that order, a change
  // committed between the two reads is seen now or on the next call, never missed.
  let credentialChanges: SQLite.Statement | undefined;
  let credentialsAt: number | undefined;
  let credentials = '';
  const credentialsVersion = (): string | undefined => {
    const others = othersCount();
    if (others === undefined) return undefined;
    if (others === credentialsAt) return credentials;
    try {
      // Prepared on first use: the table exists once migration 015 ran; before, there is no signal.
      credentialChanges ??= sqlite.prepare(`select changes from ${CREDENTIAL_CHANGES} where id = 1`).pluck();
      credentials = String(credentialChanges.get());
    } catch {
      return undefined;
    }
    credentialsAt = others;
    return credentials;
  };
  // Read synchronously, so nothing is ever left to wait for.
  return { users: versionOf('users', true), tracker: versionOf('tracker', false), alerts: versionOf('alerts', false), credentials: credentialsVersion, credentialsHeard: () => undefined };
}
