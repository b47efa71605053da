import type { Clock } from './clock.js';
import { TooManyRequests } from './errors.js';
import type { FailureWindow, LoginFailuresRepository } from '../store/login-failures-repository.js';

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

    /**
     * Counts this attempt before the password is checked, so concurrent guesses cannot all pass a
     * check made before any of them failed. Throws TooManyRequests (with Retry-After) once a key
     * has more than `maxFailures` attempts in its window.
     */
    async charge(keys: { account: string; address: string }): Promise<void> {
      const now = clock();
      const windowStart = new Date(now.getTime() - windowMs);
      const refuseIfOver = (windows: FailureWindow[], limit: number) => {
        for (const window of windows) {
          const endsAt = window.windowStartedAt.getTime() + windowMs;
          if (endsAt > now.getTime() && window.failures > limit) throw new TooManyRequests(Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000)));
        }
      };
      // Already locked: refused with a read alone, so a flood of guesses costs no writes.
      refuseIfOver(await repository.find([keys.account, keys.address]), options.maxFailures - 1);
      refuseIfOver(await repository.charge([keys.account, keys.address], now, windowStart), options.maxFailures);
      if (now.getTime() - lastPrune >= PRUNE_EVERY_MS) {
        lastPrune = now.getTime();
        await repository.prune(windowStart);
      }
    },

    /** The attempt succeeded: the account starts over, the address gets its attempt back. */
    async succeeded(keys: { account: string; address: string }): Promise<void> {
      await repository.clear(keys.account);
      await repository.refund(keys.address);
    },
  };
}

export type Lockout = ReturnType<typeof lockout>;
