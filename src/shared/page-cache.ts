/**
 * What a process's page caches hold, by name, for the metrics (docs/operations.md#metrics): each
 * cache made with `meteredAs` adds itself; the sum is read when scraped.
 */
export class PageCacheMeter {
  readonly #caches: Array<{ name: string; cache: { readonly bytes: number } }> = [];

  add(name: string, cache: { readonly bytes: number }): void {
    this.#caches.push({ name, cache });
  }

  /** Bytes held now, by cache name. */
  bytes(): Map<string, number> {
    const sums = new Map<string, number>();
    for (const { name, cache } of this.#caches) sums.set(name, (sums.get(name) ?? 0) + cache.bytes);
    return sums;
  }
}

/** How a versioned cache is bounded: the sum of its entries' costs, in bytes. */
export interface CacheBounds<T> {
  /** The meter the cache reports what it holds to, and its name there. */
  meteredAs?: readonly [PageCacheMeter, string];
  /** The most the entries may cost together; 0 keeps nothing. */
  maxBytes: number;
  /** What keeping `value` under `key` costs, in bytes (its key included). */
  costOf(key: string, value: T): number;
}

/**
 * Results that stay valid while the data they came from has not changed. `version()` names the state
 * of the database (every write, in any process, changes it); a new version empties the cache. Without
 * a version (undefined) nothing is cached. Bounded in bytes: the oldest entries go first until a new
 * one fits, and a value costing more than the whole bound is answered but not kept.
 */
export function versionedCache<T>(version: () => string | undefined, bounds: CacheBounds<T>) {
  let seen: string | undefined;
  const entries = new Map<string, { value: T; cost: number }>();
  let bytes = 0;

  /** The version in force, after emptying the cache if it moved. */
  function currentVersion(): string | undefined {
    const current = version();
    if (current !== undefined && current !== seen) {
      entries.clear();
      bytes = 0;
      seen = current;
    }
    return current;
  }

  function store(key: string, value: T): void {
    const cost = bounds.costOf(key, value);
    if (cost > bounds.maxBytes) return;
    const replaced = entries.get(key);
    if (replaced !== undefined) {
      entries.delete(key);
      bytes -= replaced.cost;
    }
    // A Map iterates in insertion order: the first key is the oldest.
    for (const [oldest, entry] of entries) {
      if (bytes + cost <= bounds.maxBytes) break;
      entries.delete(oldest);
      bytes -= entry.cost;
    }
    entries.set(key, { value, cost });
    bytes += cost;
  }

  const cache = {
    /** A cached value without waiting, for the hot path; undefined when it must be computed. */
    peek: (key: string): T | undefined => (currentVersion() === undefined ? undefined : entries.get(key)?.value),

    async get(key: string, compute: () => Promise<T>): Promise<T> {
      const current = currentVersion();
      const hit = current === undefined ? undefined : entries.get(key);
      if (hit !== undefined) return hit.value;
      const value = await compute();
      // Store only if nothing was written while computing, so a value is never newer than its version.
      if (current !== undefined && version() === current) store(key, value);
      return value;
    },

    /** What the entries cost together, in bytes (never more than maxBytes). */
    get bytes(): number {
      return bytes;
    },

    /** How many entries are kept. */
    get size(): number {
      return entries.size;
    },
  };
  if (bounds.meteredAs) bounds.meteredAs[0].add(bounds.meteredAs[1], cache);
  return cache;
}
