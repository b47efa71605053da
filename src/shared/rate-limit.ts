import type { Clock } from './clock.js';
import { TooManyRequests } from './problems.js';

/**
 * Token buckets, one per key, per process: a bucket holds up to `capacity` tokens and gains `perSecond`
 * a second; `take` spends one, or answers how many seconds until one is there (a burst up to the
 * capacity passes, a steady stream beyond the rate waits). Memory is bounded: past `maxKeys` keys, the
 * one used longest ago is forgotten.
 */
export function tokenBuckets(clock: Clock, maxKeys = 10_000) {
  const buckets = new Map<string | number, { tokens: number; at: number }>();
  return {
    /** Spends a token of `key`'s bucket: undefined, or the seconds to wait (at least 1) when it is empty. */
    take(key: string | number, capacity: number, perSecond: number): number | undefined {
      const now = clock().getTime();
      const bucket = buckets.get(key) ?? { tokens: capacity, at: now };
      buckets.delete(key);
      bucket.tokens = Math.min(capacity, bucket.tokens + (Math.max(0, now - bucket.at) * perSecond) / 1000);
      bucket.at = now;
      if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value as string | number);
      buckets.set(key, bucket);
      if (bucket.tokens < 1) return Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
      bucket.tokens -= 1;
      return undefined;
    },
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
