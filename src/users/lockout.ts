import { createHash } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { TooManyRequests } from '../shared/problems.js';
import type { CounterKey, FailureWindow, LoginFailuresRepository } from './login-failures.store.js';

export interface LockoutOptions {
  /** Failed attempts allowed for one name from one address within one window. */
  maxFailures: number;
  /** Failed attempts allowed from one address, across names, within one window. */
  addressMaxFailures: number;
  /** Failed attempts allowed for one name, across addresses, within one window. */
  accountMaxFailures: number;
  windowSeconds: number;
}

/** How many addresses an account is remembered to have logged in from (the latest). */
export const KNOWN_ADDRESSES_PER_ACCOUNT = 10;

/** How often a process sweeps passed windows out of the table. */
const PRUNE_EVERY_MS = 60_000;

/** A known address's last success is written again only when older than this (fewer writes a login). */
const REMEMBER_AGAIN_AFTER_MS = 3_600_000;

/** Longest name and address kept as they are; longer ones (and any with U+0000) are kept as a hash. */
const MAX_NAME = 254;
const MAX_ADDRESS = 64;

const bounded = (text: string, max: number) =>
  text.length <= max && !text.includes('\u0000') ? text : `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** The name a login attempt is counted under: as typed, in lower case, whether or not such a user exists. */
export const accountName = (typed: string): string => bounded(typed.toLowerCase(), MAX_NAME);

/** One login attempt, as the lockout counts it. */
export interface Attempt {
  /** accountName of the login or email as typed. */
  name: string;
  address: string;
  /** The user the name found, if any: only for the addresses it has logged in from. */
  userId: number | undefined;
}

/** An attempt that has been counted, with what was read for it. */
export interface ChargedAttempt extends Attempt {
  /** When the user last logged in from this address, if it has. */
  knownSince: Date | undefined;
}

/**
 * Brute-force protection (docs/security.md#brute-force). Three counters an attempt, in fixed windows,
 * in the database so every process shares them:
 * - the name from the address: `maxFailures`, always applied;
 * - the address across names: `addressMaxFailures`;
 * - the name across addresses: `accountMaxFailures`.
 * The last two are not applied to a user from an address it has logged in from before, so guessing by
 * others never locks out a client that holds valid credentials where it used them. Unknown names are
 * counted exactly like known ones. API keys are not counted here at all (authentication.ts).
 */
export function lockout(repository: LoginFailuresRepository, clock: Clock, options: LockoutOptions) {
  const windowMs = options.windowSeconds * 1000;
  let lastPrune = 0;

  const keysOf = ({ name, address }: Attempt) => ({
    pair: { account: name, address },
    address: { account: '', address },
    account: { account: name, address: '' },
  });

  /** The limit each counter of `attempt` is held to; undefined: not applied. */
  function limitOf(window: CounterKey, known: boolean): number | undefined {
    if (window.account !== '' && window.address !== '') return options.maxFailures;
    if (known) return undefined;
    return window.account === '' ? options.addressMaxFailures : options.accountMaxFailures;
  }

  /** Throws TooManyRequests when a counter has more than its limit less `slack`; Retry-After until the last of them ends. */
  function refuseIfOver(windows: FailureWindow[], known: boolean, slack: number, now: number): void {
    let until = 0;
    for (const window of windows) {
      const limit = limitOf(window, known);
      const endsAt = window.windowStartedAt.getTime() + windowMs;
      if (limit !== undefined && endsAt > now && window.failures > limit - slack) until = Math.max(until, endsAt);
    }
    if (until > 0) throw new TooManyRequests(Math.max(1, Math.ceil((until - now) / 1000)));
  }

  /** Remembers the address the user just logged in from, keeping the latest few. */
  async function remember(attempt: Attempt, knownSince: Date | undefined, now: Date): Promise<void> {
    if (attempt.userId === undefined) return;
    if (knownSince !== undefined && now.getTime() - knownSince.getTime() < REMEMBER_AGAIN_AFTER_MS) return;
    await repository.rememberSuccess(attempt.userId, attempt.address, now, knownSince === undefined ? KNOWN_ADDRESSES_PER_ACCOUNT : undefined);
  }

  return {
    attempt(typedName: string, address: string | undefined, userId: number | undefined): Attempt {
      return { name: accountName(typedName), address: bounded(address === undefined || address === '' ? 'unknown' : address, MAX_ADDRESS), userId };
    },

    /**
     * Counts this attempt before the password is checked, so concurrent guesses cannot all pass a
     * check made before any of them failed. Throws TooManyRequests (with Retry-After) once a
     * counter that applies has more than its limit in its window.
     */
    async charge(attempt: Attempt): Promise<ChargedAttempt> {
      const now = clock();
      const windowStart = new Date(now.getTime() - windowMs);
      const keys = keysOf(attempt);
      // The same two reads for every name, known or not (user id 0 is never one).
      const [windows, knownSince] = await Promise.all([
        repository.find([keys.pair, keys.address, keys.account]),
        repository.lastSuccess(attempt.userId ?? 0, attempt.address),
      ]);
      const known = knownSince !== undefined;
      // Already locked: refused with these reads alone, so a flood of guesses costs no writes.
      refuseIfOver(windows, known, 1, now.getTime());
      refuseIfOver(await repository.charge([keys.pair, keys.address, keys.account], now, windowStart), known, 0, now.getTime());
      if (now.getTime() - lastPrune >= PRUNE_EVERY_MS) {
        lastPrune = now.getTime();
        await repository.prune(windowStart);
      }
      return { ...attempt, knownSince };
    },

    /** The password was right: this name starts over from this address; the address and the name get the attempt back. */
    async succeeded(attempt: ChargedAttempt): Promise<void> {
      const keys = keysOf(attempt);
      await repository.clear(keys.pair);
      await repository.refund([keys.address, keys.account]);
      await remember(attempt, attempt.knownSince, clock());
    },

    /** The user's API key was right: nothing was counted; the address is remembered like a password login's. */
    async apiKeyAccepted(attempt: Attempt): Promise<void> {
      if (attempt.userId === undefined) return;
      await remember(attempt, await repository.lastSuccess(attempt.userId, attempt.address), clock());
    },
  };
}

export type Lockout = ReturnType<typeof lockout>;

/**
 * Clears every counter of the user's login and email, from every address (`cmi users unlock`, and a
 * password reset). Address counters and the remembered addresses stay.
 */
export async function unlockAccount(repository: LoginFailuresRepository, user: { login: string; email: string }): Promise<void> {
  await repository.clearAccounts([...new Set([accountName(user.login), accountName(user.email)])]);
}
