import { LRUCache } from 'lru-cache';
import type { Clock } from './clock.js';
import { TooManyRequests } from './problems.js';

/**
 * Token buckets, one per key, per process: a bucket holds up to `capacity` tokens and gains `perSecond`
 * a second; `take` spends one, or answers how many seconds until one is there (a burst up to the
 * capacity passes, a steady stream beyond the rate waits). Memory is bounded (lru-cache): past `maxKeys`
 * keys, the one used longest ago is forgotten.
 */
export function tokenBuckets(clock: Clock, maxKeys = 10_000) {
  const buckets = new LRUCache<string | number, { tokens: number; at: number }>({ max: maxKeys });

  /**
   * Spends `count` tokens at once, or none: the seconds to wait until there are that many. More than
   * the capacity passes once the bucket is full and leaves it in debt (the next spend waits for it to
   * be paid back at `perSecond`), so a batch bigger than a burst still passes, the rate kept.
   */
  const takeMany = (key: string | number, count: number, capacity: number, perSecond: number): number | undefined => {
    const now = clock().getTime();
    // `get` makes a known key the one used last; a new one is set, making room if need be.
    let bucket = buckets.get(key);
    if (bucket === undefined) buckets.set(key, (bucket = { tokens: capacity, at: now }));
    bucket.tokens = Math.min(capacity, bucket.tokens + (Math.max(0, now - bucket.at) * perSecond) / 1000);
    bucket.at = now;
    const needed = Math.min(count, capacity);
    if (bucket.tokens < needed) return Math.max(1, Math.ceil((needed - bucket.tokens) / perSecond));
    bucket.tokens -= count;
    return undefined;
  };

  return {
    /** Spends a token of `key`'s bucket: undefined, or the seconds to wait (at least 1) when it is empty. */
    take: (key: string | number, capacity: number, perSecond: number): number | undefined => takeMany(key, 1, capacity, perSecond),
    takeMany,
  };
}

/**
 * At most `perSecond` requests a second per key (a credential), as a token bucket that holds one
 * second's worth: a burst up to the limit passes, a steady stream beyond it gets 429 with Retry-After.
 */
export function rateLimit(clock: Clock, perSecond: number, maxKeys = 10_000) {
  const buckets = tokenBuckets(clock, maxKeys);
  return (key: string | number): void => {
    const wait = buckets.take(key, perSecond, perSecond);
    if (wait !== undefined) throw new TooManyRequests(wait);
  };
}
