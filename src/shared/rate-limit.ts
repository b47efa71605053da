import type { Clock } from './clock.js';
import { TooManyRequests } from './problems.js';

/**
 * At most `perSecond` requests a second per key (a credential), as a token bucket that holds one
 * second's worth: a burst up to the limit passes, a steady stream beyond it gets 429 with Retry-After.
 * Per process. Memory is bounded: past `maxKeys` keys, the one used longest ago is forgotten.
 */
export function rateLimit(clock: Clock, perSecond: number, maxKeys = 10_000) {
  const buckets = new Map<string | number, { tokens: number; at: number }>();
  return (key: string | number): void => {
    const now = clock().getTime();
    const bucket = buckets.get(key) ?? { tokens: perSecond, at: now };
    buckets.delete(key);
    bucket.tokens = Math.min(perSecond, bucket.tokens + (Math.max(0, now - bucket.at) * perSecond) / 1000);
    bucket.at = now;
    if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value as string | number);
    buckets.set(key, bucket);
    if (bucket.tokens < 1) throw new TooManyRequests(Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)));
    bucket.tokens -= 1;
  };
}
