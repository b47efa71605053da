/**
 * Results that stay valid while the data they came from has not changed. `version()` names the state
 * of the database (every write, in any process, changes it); a new version empties the cache. Without
 * a version (undefined) nothing is cached. Bounded: the oldest entry goes first.
 */
export function versionedCache<T>(version: () => string | undefined, maxEntries: number) {
  let seen: string | undefined;
  const entries = new Map<string, T>();

  /** The version in force, after emptying the cache if it moved. */
  function currentVersion(): string | undefined {
    const current = version();
    if (current !== undefined && current !== seen) {
      entries.clear();
      seen = current;
    }
    return current;
  }

  return {
    /** A cached value without waiting, for the hot path; undefined when it must be computed. */
    peek: (key: string): T | undefined => (currentVersion() === undefined ? undefined : entries.get(key)),

    async get(key: string, compute: () => Promise<T>): Promise<T> {
      const current = currentVersion();
      const hit = current === undefined ? undefined : entries.get(key);
      if (hit !== undefined) return hit;
      const value = await compute();
      if (current === undefined) return value;
      // Store only if nothing was written while computing, so a value is never newer than its version.
      if (version() === current) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entries.set(key, value);
      }
      return value;
    },
  };
}
