import { createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { type Clock, millisOf } from '../shared/clock.js';
import type { AllowedFrom } from './allowed-addresses.js';
import type { User } from './user.js';

/** What a successful verification established. */
export interface Verified {
  user: User;
  /** The user's session epoch at verification, for the cookie a Basic login is answered with. */
  sessionEpoch: number;
  /** The API key that was verified, when the password was one (users/api-key-usage.ts records its use). */
  apiKeyId?: number;
  /** The user's allowed addresses, read with the verification (users/allowed-addresses.ts); absent: any address. */
  allowedFrom?: AllowedFrom;
}

export interface VerificationCacheOptions {
  /** How long a verified credential is trusted without another check, in milliseconds. */
  ttlMs: number;
  maxEntries: number;
}

/**
 * One stored verification: `current` turns false for good when the cache drops it; past `expiresAt` it
 * is not to be used either. From `refreshAt` on, a use of it may start a check of the credential again
 * in the background (`refreshing`), whose success replaces it before it expires.
 */
export interface CacheEntry {
  readonly verified: Verified;
  readonly expiresAt: number;
  readonly refreshAt: number;
  current: boolean;
  refreshing: boolean;
}

/** How far into its life an entry in use is checked again in the background: its last fifth. */
const REFRESH_AFTER_SHARE = 0.8;

/** What the database says of other processes' changes to credentials (db/dialects/change-notifications/ DataVersions). */
export interface OthersChanges {
  /** Moves when another process changed a user or revoked a session; undefined while there is no such signal. */
  version(): string | undefined;
  /** Settles once `version()` shows every change committed before the call; undefined when it already does. */
  heard(): Promise<void> | undefined;
}

const NO_SIGNAL: OthersChanges = { version: () => undefined, heard: () => undefined };

/**
 * Remembers credentials this process verified recently, so Basic auth on every request does not rehash
 * and a session cookie does not hit the database each time. Keys are an HMAC of the credential under a
 * per-process random key (no password sits in memory as a key); only successes are stored. Bounded in
 * time (ttlMs) and size (the one used longest ago dropped first), by lru-cache. Credential changes in this process drop the user's
 * entries at once; changes by other processes drop every entry as soon as `others.version()` moves,
 * checked on every use (after `others.heard()`, where the database tells of changes asynchronously).
 * While it is undefined (PostgreSQL's listening connection is down) entries live at most ttlMs
 * (docs/security.md#suspend-now-means-now).
 */
export function verificationCache(clock: Clock, options: VerificationCacheOptions, others: OthersChanges = NO_SIGNAL) {
  const key = createSecretKey(randomBytes(32));
  // lru-cache bounds the entries in number and in time, on the clock given (so a test's clock moves
  // them too; ttlResolution 0: asked every time, never a stale reading kept behind a timer). Whatever
  // drops an entry (expiry, room for another, a replacement, a delete) marks it no longer current, for
  // a caller holding it (holds). Each entry's own expiresAt stays the authority on whether it may be
  // answered from: it is what holds() and refreshDue() check, without the cache.
  // The time in ms without a Date on the system clock (Date.now): read on every request.
  const millis = millisOf(clock);
  const entries = new LRUCache<string, CacheEntry>({
    max: options.maxEntries,
    ...(options.ttlMs > 0 ? { ttl: options.ttlMs } : {}),
    ttlResolution: 0,
    perf: { now: millis },
    dispose: (entry) => {
      entry.current = false;
    },
  });
  // Moves whenever a user's credentials change. A check that began before a change must not store
  // what it read, or the change would be undone for a TTL.
  let generation = 0;
  const dropAll = () => entries.clear();
  const evictUser = (userId: number) => {
    // Collected first: lru-cache's iterators do not promise to survive a delete while they run.
    const ids: string[] = [];
    for (const [id, entry] of entries.entries()) if (entry.verified.user.id === userId) ids.push(id);
    for (const id of ids) entries.delete(id);
  };
  // The last credentials version seen. When it moves, another process changed some user's credentials
  // (which, the signal does not say): every entry goes, and the generation moves, so a check that read
  // the database before the change stores nothing. Undefined (no signal) leaves entries to their TTL;
  // the version after an outage differs from the one before it where changes may have been missed (a
  // reconnect counts as a change), so an outage ends with a drop. The very first version is taken as
  // it is, unless entries were stored before it (`storedBlind`): then it counts as a move.
  let seenChanges: string | undefined;
  let storedBlind = false;
  const followOthers = (): string | undefined => {
    const current = others.version();
    if (current === undefined || current === seenChanges) return current;
    const first = seenChanges === undefined && !storedBlind;
    seenChanges = current;
    if (first) return current;
    storedBlind = false;
    generation += 1;
    dropAll();
    return current;
  };
  // Asked once now, so a signal that takes time to start (PostgreSQL's listening connection) is
  // usually there before the first credential is stored.
  if (options.ttlMs !== 0) followOthers();

  const digest = (credential: string) => createHmac('sha256', key).update(credential).digest('base64url');
  const isCurrent = (entry: CacheEntry, now = millis()) => entry.current && entry.expiresAt > now;

  /** The live entry for this credential, if it was verified recently. */
  const lookup = (credential: string): CacheEntry | undefined => {
    if (options.ttlMs === 0) return undefined;
    followOthers();
    const id = digest(credential);
    const entry = entries.get(id);
    if (entry === undefined) return undefined;
    if (!isCurrent(entry)) {
      entries.delete(id);
      return undefined;
    }
    return entry;
  };

  return {
    lookup,

    get: (credential: string): Verified | undefined => lookup(credential)?.verified,

    /**
     * Settles once every other process's change committed before the call is seen by this cache; until
     * then no entry may be answered from. Undefined when there is nothing to wait for.
     */
    othersHeard: (): Promise<void> | undefined => (options.ttlMs === 0 ? undefined : others.heard()),

    /** Whether `entry`, found earlier, may still be answered from at `now`: not dropped (in this process or by another's change), not expired. */
    holds(entry: CacheEntry, now?: number): boolean {
      followOthers();
      return isCurrent(entry, now);
    },

    /**
     * True once for an entry in use in the last fifth of its life (docs/security.md#the-verification-cache):
     * the caller checks its credential again in the background while the entry goes on answering until
     * its own expiry; a success stores a new entry (set), a refusal drops the user's (credentialsChanged).
     */
    refreshDue(entry: CacheEntry, now: number): boolean {
      if (entry.refreshing || now < entry.refreshAt || !entry.current) return false;
      entry.refreshing = true;
      return true;
    },

    /** The current generation: read it before reading the database, hand it to set(). */
    get generation(): number {
      if (options.ttlMs !== 0) followOthers();
      return generation;
    },

    /** Stores a verification, unless credentials changed since the check began (`since`), here or in another process. */
    set(credential: string, verified: Verified, since: number): void {
      if (options.ttlMs === 0) return;
      const current = followOthers();
      if (since !== generation) return;
      if (current === undefined && seenChanges === undefined) storedBlind = true;
      const now = millis();
      // A replaced entry is disposed of (no longer current), as one dropped for room is.
      entries.set(digest(credential), { verified, expiresAt: now + options.ttlMs, refreshAt: now + options.ttlMs * REFRESH_AFTER_SHARE, current: true, refreshing: false });
    },

    /** Forgets every credential of this user, whose password, key, status or roles changed. */
    credentialsChanged: (userId: number): void => {
      generation += 1;
      evictUser(userId);
    },

    /** Forgets every credential: what a role grants changed, and with it what its holders may do. */
    allCredentialsChanged: (): void => {
      generation += 1;
      dropAll();
    },
  };
}

export type VerificationCache = ReturnType<typeof verificationCache>;
