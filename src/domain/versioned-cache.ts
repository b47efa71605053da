/**
 * Results that stay valid while the data they came from has not changed. `version()` names the state
 * of the database (every write, in any process, changes it); a new version empties the cache. Without
 * a version (undefined) nothing is cached. Bounded: the oldest entry goes first.
 */
export function versionedCache<T>(version: () => string | undefined, maxEntries: number) {
  let seen: string | undefined;
  const entries = new Map<string, T>();

  return {
    async get(key: string, compute: () => Promise<T>): Promise<T> {
      const current = version();
      if (current === undefined) return compute();
      if (current !== seen) {
        entries.clear();
        seen = current;
      }
      const hit = entries.get(key);
      if (hit !== undefined) return hit;
      const value = await compute();
      // Store only if nothing was written while computing, so a value is never newer than its version.
      if (version() === current) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entries.set(key, value);
      }
      return value;
    },
  };
}
