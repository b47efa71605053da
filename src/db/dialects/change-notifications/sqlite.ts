import type SQLite from 'better-sqlite3';
import type { CachedData, WriteCounter } from './write-counter.js';
import type { ChangeNotifications, DataVersions } from './change-notifications.js';

/** How stale this process's view of other processes' writes may get, in milliseconds. */
const OTHER_PROCESS_CHECK_MS = 1;

/** Other processes read PRAGMA data_version (sqliteDataVersions): nothing to create. */
export const sqliteChangeNotifications: ChangeNotifications = {
  create: async () => {},
  createFunction: async () => {},
  drop: async () => {},
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
  const versionOf = (data: CachedData) => {
    // The version string is made again only when a count moved, not on every call.
    let version = '';
    let versionOther = -1;
    let versionOwn = -1;
    return (): string | undefined => {
      const others = othersCount();
      if (others === undefined) return undefined;
      if (versionOther !== others || versionOwn !== writes.counts[data]) {
        versionOther = others;
        versionOwn = writes.counts[data];
        version = `${others}:${versionOwn}`;
      }
      return version;
    };
  };
  return { users: versionOf('users'), tracker: versionOf('tracker') };
}
