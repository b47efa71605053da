import { createHmac, createSecretKey, randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { User } from './user.js';

/** What a successful verification established. */
export interface Verified {
  user: User;
  /** The user's session epoch at verification, for the cookie a Basic login is answered with. */
  sessionEpoch: number;
}

export interface VerificationCacheOptions {
  /** How long a verified credential is trusted without another check, in milliseconds. */
  ttlMs: number;
  maxEntries: number;
}

/** One stored verification: `current` turns false for good when the cache drops it; past `expiresAt` it is not to be used either. */
export interface CacheEntry {
  readonly verified: Verified;
  readonly expiresAt: number;
  current: boolean;
}

/**
 * Remembers credentials this process verified recently, so Basic auth on every request does not rehash
 * and a session cookie does not hit the database each time. Keys are an HMAC of the credential under a
 * per-process random key (no password sits in memory as a key); only successes are stored. Bounded in
 * time (ttlMs) and size (oldest dropped first); credential changes in this process drop the user's
 * entries at once, and other processes' entries expire within ttlMs.
 */
export function verificationCache(clock: Clock, options: VerificationCacheOptions) {
  const key = createSecretKey(randomBytes(32));
  const entries = new Map<string, CacheEntry>();
  // Moves whenever a user's credentials change. A check that began before a change must not store
  // what it read, or the change would be undone for a TTL.
  let generation = 0;
  const remove = (id: string, entry: CacheEntry) => {
    entry.current = false;
    entries.delete(id);
  };
  const evictUser = (userId: number) => {
    for (const [id, entry] of entries) if (entry.verified.user.id === userId) remove(id, entry);
  };

  const digest = (credential: string) => createHmac('sha256', key).update(credential).digest('base64url');
  const isCurrent = (entry: CacheEntry) => entry.current && entry.expiresAt > clock().getTime();

  /** The live entry for this credential, if it was verified recently. */
  const lookup = (credential: string): CacheEntry | undefined => {
    if (options.ttlMs === 0) return undefined;
    const id = digest(credential);
    const entry = entries.get(id);
    if (entry === undefined) return undefined;
    if (!isCurrent(entry)) {
      remove(id, entry);
      return undefined;
    }
    return entry;
  };

  return {
    lookup,

    get: (credential: string): Verified | undefined => lookup(credential)?.verified,

    /** The current generation: read it before reading the database, hand it to set(). */
    get generation(): number {
      return generation;
    },

    /** Stores a verification, unless credentials changed since the check began (`since`). */
    set(credential: string, verified: Verified, since: number): void {
      if (options.ttlMs === 0 || since !== generation) return;
      const id = digest(credential);
      const previous = entries.get(id);
      if (previous) remove(id, previous);
      if (entries.size >= options.maxEntries) {
        const [oldestId, oldest] = entries.entries().next().value as [string, CacheEntry];
        remove(oldestId, oldest);
      }
      entries.set(id, { verified, expiresAt: clock().getTime() + options.ttlMs, current: true });
    },

    /** Forgets every credential of this user, whose password, key, status or roles changed. */
    credentialsChanged: (userId: number): void => {
      generation += 1;
      evictUser(userId);
    },

    /** Forgets every credential: what a role grants changed, and with it what its holders may do. */
    allCredentialsChanged: (): void => {
      generation += 1;
      for (const [id, entry] of entries) remove(id, entry);
    },
  };
}

export type VerificationCache = ReturnType<typeof verificationCache>;
