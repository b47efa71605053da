import { LRUCache } from 'lru-cache';

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
 * Changes that touch only some of a cache's entries, told by the writer itself (a process knows what
 * its own writes changed; another process's writes move the version instead): each a test of whether
 * it may have changed an entry of a given tag. Kept for the last `keep` changes.
 */
export class PartialChanges<Tag> {
  readonly #tests: Array<(tag: Tag) => boolean> = [];
  #sequence = 0;

  constructor(private readonly keep = 1024) {}

  /** Moves with every change told. */
  get sequence(): number {
    return this.#sequence;
  }

  /** A change: `mayChange` is true for the tag of every entry it may have changed (better too many). */
  tell(mayChange: (tag: Tag) => boolean): void {
    this.#tests.push(mayChange);
    if (this.#tests.length > this.keep) this.#tests.shift();
    this.#sequence += 1;
  }

  /** The changes told after `sequence`; undefined when they are no longer all kept. */
  since(sequence: number): ReadonlyArray<(tag: Tag) => boolean> | undefined {
    const count = this.#sequence - sequence;
    if (count > this.#tests.length) return undefined;
    return this.#tests.slice(this.#tests.length - count);
  }
}

/**
 * Results that stay valid while the data they came from has not changed. `version()` names the state
 * of the database (every write, in any process, changes it, unless the writer tells `partial` what it
 * changed); a new version empties the cache. Without a version (undefined) nothing is cached. With
 * `partial`, an entry kept with a tag stays through the changes told there that cannot have changed
 * it; one kept without a tag goes with any. Bounded in bytes: the oldest entries go first until a new
 * one fits, and a value costing more than the whole bound is answered but not kept.
 */
export function versionedCache<T, Tag = never>(version: () => string | undefined, bounds: CacheBounds<T>, partial?: PartialChanges<Tag>) {
  let seen: string | undefined;
  let seenSequence = partial?.sequence ?? 0;
  // Bounded in bytes by lru-cache (maxSize, each entry's cost its size; one costing more than the bound
  // is not kept). Read with `peek` only, never `get`: a hit does not move an entry, so the oldest kept
  // goes first, as docs/architecture.md#caches says (the users-page test asserts a page read again is
  // still the first to go). lru-cache cannot be bounded by 0 bytes: a bound of 0 keeps nothing here.
  const entries = new LRUCache<string, { value: T; tag: Tag | undefined }>({
    maxSize: Math.max(1, bounds.maxBytes),
    sizeCalculation: (entry, key) => bounds.costOf(key, entry.value),
  });

  /** The version in force, after emptying the cache if it moved, and dropping what partial changes may have changed. */
  function currentVersion(): string | undefined {
    const current = version();
    if (current !== undefined && current !== seen) {
      entries.clear();
      seen = current;
      seenSequence = partial?.sequence ?? 0;
    }
    if (partial !== undefined && partial.sequence !== seenSequence) {
      const tests = partial.since(seenSequence);
      seenSequence = partial.sequence;
      if (tests === undefined) entries.clear();
      else {
        // Collected first: lru-cache's iterators do not promise to survive a delete while they run.
        const changed: string[] = [];
        for (const [key, entry] of entries.entries()) {
          if (entry.tag === undefined || tests.some((mayChange) => mayChange(entry.tag as Tag))) changed.push(key);
        }
        for (const key of changed) entries.delete(key);
      }
    }
    return current;
  }

  /** Whether no change told after `sequence` may have changed an entry of `tag` (none told, when it has no tag). */
  function unchangedSince(sequence: number, tag: Tag | undefined): boolean {
    if (partial === undefined || partial.sequence === sequence) return true;
    const tests = tag === undefined ? undefined : partial.since(sequence);
    return tests !== undefined && !tests.some((mayChange) => mayChange(tag as Tag));
  }

  function store(key: string, value: T, tag: Tag | undefined): void {
    if (bounds.maxBytes > 0) entries.set(key, { value, tag });
  }

  const cache = {
    /** A cached value without waiting, for the hot path; undefined when it must be computed. */
    peek: (key: string): T | undefined => (currentVersion() === undefined ? undefined : entries.peek(key)?.value),

    /** The value of `key`, computed when not kept; kept with `tag` (what partial changes are tested against). */
    async get(key: string, compute: () => Promise<T>, tag?: Tag): Promise<T> {
      const current = currentVersion();
      const hit = current === undefined ? undefined : entries.peek(key);
      if (hit !== undefined) return hit.value;
      const sequence = partial?.sequence ?? 0;
      const value = await compute();
      // Stored only if nothing that may have changed it was written while computing, so a value is never
      // newer than its version: the version unmoved, and each change told meanwhile not one of its tag's.
      // (A slow page would otherwise never be kept while a stream of new errors is told.)
      if (current !== undefined && version() === current && unchangedSince(sequence, tag)) store(key, value, tag);
      return value;
    },

    /** What the entries cost together, in bytes (never more than maxBytes). */
    get bytes(): number {
      return entries.calculatedSize;
    },

    /** How many entries are kept. */
    get size(): number {
      return entries.size;
    },
  };
  if (bounds.meteredAs) bounds.meteredAs[0].add(bounds.meteredAs[1], cache);
  return cache;
}
