import type { Clock } from './clock.js';
import { TooManyRequests } from './errors.js';
import type { LoginFailuresRepository } from '../store/login-failures-repository.js';

export interface LockoutOptions {
  /** Failed attempts allowed per login and per address within one window. */
  maxFailures: number;
  windowSeconds: number;
}

/** How often a process sweeps passed windows out of the table. */
const PRUNE_EVERY_MS = 60_000;

/**
 * Brute-force protection: after `maxFailures` failed logins for one login name, or from one address,
 * within a window, that login or address gets 429 until the window passes. Counters live in the
 * database, so every process sees the same ones.
 */
export function lockout(repository: LoginFailuresRepository, clock: Clock, options: LockoutOptions) {
  const windowMs = options.windowSeconds * 1000;
  let lastPrune = 0;

  return {
    /** `account` is `user:<id>` for an existing user, else the login as typed (lower case). */
    keys(account: string, address: string): { account: string; address: string } {
      return { account: account.startsWith('user:') ? account : `login:${account.toLowerCase()}`, address: `address:${address}` };
    },

    /** Throws TooManyRequests (with Retry-After) while any key is locked. */
    async assertAllowed(keys: string[]): Promise<{ accountHasFailures: boolean }> {
      const now = clock().getTime();
      let accountHasFailures = false;
      for (const window of await repository.find(keys)) {
        const endsAt = window.windowStartedAt.getTime() + windowMs;
        if (endsAt <= now) continue;
        if (!window.key.startsWith('address:')) accountHasFailures = true;
        if (window.failures >= options.maxFailures) throw new TooManyRequests(Math.ceil((endsAt - now) / 1000));
      }
      return { accountHasFailures };
    },

    async recordFailure(keys: string[]): Promise<void> {
      const now = clock();
      const windowStart = new Date(now.getTime() - windowMs);
      await repository.recordFailure(keys, now, windowStart);
      if (now.getTime() - lastPrune >= PRUNE_EVERY_MS) {
        lastPrune = now.getTime();
        await repository.prune(windowStart);
      }
    },

    clear: (key: string) => repository.clear(key),
  };
}

export type Lockout = ReturnType<typeof lockout>;
