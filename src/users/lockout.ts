import { createHash } from 'node:crypto';
import { DatabaseUnavailable } from '../db/dialects/connection/database-unavailable.js';
import type { Clock } from '../shared/clock.js';
import { TooManyRequests } from '../shared/problems.js';
import { retry } from '../shared/retry.js';
import type { CounterKey, FailureWindow, LoginFailuresRepository } from './login-failures.store.js';

export interface LockoutOptions {
  /** Failed attempts allowed for one name from one address within one window. */
  maxFailures: number;
  /** Failed attempts allowed from one address, across names, within one window. */
  addressMaxFailures: number;
  /** Failed attempts allowed for one name, across addresses, within one window. */
  accountMaxFailures: number;
  windowSeconds: number;
  /** Whether a locked account is mailed an unlock link (users/account-unlock.ts): the refusal then says so. */
  unlockByMail?: boolean;
}

/** The lockout's 429, with when the name's lock ends (epoch ms; 0 when only the address is refused). */
export class LockedOut extends TooManyRequests {
  constructor(retryAfterSeconds: number, messages: { base: string[] }, readonly nameLockedUntil: number) {
    super(retryAfterSeconds, messages);
  }
}

/** How many addresses an account is remembered to have logged in from (the latest). */
export const KNOWN_ADDRESSES_PER_ACCOUNT = 10;

/** How often a process sweeps passed windows out of the table. */
const PRUNE_EVERY_MS = 60_000;

/** A known address's last success is written again only when older than this (fewer writes a login). */
const REMEMBER_AGAIN_AFTER_MS = 3_600_000;

/**
 * How long a login waits for its counters to be written before it goes on without: longer, the
 * database is waiting for a lock another process holds (a backup, a sqlite3 shell, a long
 * transaction), and a right password is answered at once, its bookkeeping written once the lock is
 * let go (docs/operations.md#when-the-database-is-sick). A wrong one still waits for its count.
 */
const WRITE_GRACE_MS = 100;

/** Pause before a deferred bookkeeping write that the database refused for now is tried again. */
const RETRY_PAUSE_MS = 1000;

/** Most counters this process keeps in memory while their writes wait; past it, logins wait for the database. */
const MAX_UNWRITTEN = 10_000;

/** `promise`'s value if it settles within `ms`; `undefined` if it is still pending then (it goes on). */
async function within<T>(promise: Promise<T>, ms: number): Promise<{ value: T } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise.then((value) => ({ value })), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Longest name and address kept as they are; longer ones (and any with U+0000) are kept as a hash. */
const MAX_NAME = 254;
const MAX_ADDRESS = 64;

const bounded = (text: string, max: number) =>
  text.length <= max && !text.includes('\u0000') ? text : `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** The name a login attempt is counted under: as typed, in lower case, whether or not such a user exists. */
export const accountName = (typed: string): string => bounded(typed.toLowerCase(), MAX_NAME);

/** A time of a refusal: UTC to the second, rounded up (never before the window ends). */
const untilText = (ms: number) => new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** `text` as one word of a shell command line (single-quoted unless it is plain). */
const shellWord = (text: string) => (/^[A-Za-z0-9@._+-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);

/**
 * What a 429 of the lockout says (docs/security.md#brute-force): which counters are full, until
 * when, and for a name's, that `cmi local users unlock` ends it at once. Said alike for every name,
 * whether or not a user has it, and whatever the password: it tells no more than the 429 and its
 * Retry-After did (unknown names are locked alike), so it names no account and answers no guess.
 */
function refusal(typed: string, nameUntil: number, addressUntil: number, unlockByMail = false): { base: string[] } {
  const base: string[] = [];
  if (nameUntil > 0) {
    // Said alike for every name: whether an account exists and was mailed is not told.
    const byMail = unlockByMail ? ', or until the unlock link mailed to the account\'s address is followed (POST /users/:id/unlock_account with its unlock_token)' : '';
    base.push(`Too many failed logins for "${typed}": it is locked until ${untilText(nameUntil)}${byMail}, or until an administrator runs: cmi local users unlock ${shellWord(typed)}`);
  }
  if (addressUntil > 0) base.push(`Too many failed logins from this address: it is refused until ${untilText(addressUntil)}`);
  return { base };
}

/** One login attempt, as the lockout counts it. */
export interface Attempt {
  /** accountName of the login or email as typed. */
  name: string;
  /** The login or email as typed, for the refusal's message (`name` when not given). */
  typed?: string;
  address: string;
  /** The user the name found, if any: only for the addresses it has logged in from. */
  userId: number | undefined;
}

/** An attempt that has been counted, with what was read for it. */
export interface ChargedAttempt extends Attempt {
  /** When the user last logged in from this address, if it has. */
  knownSince: Date | undefined;
  /** The count's first write: rejects (DatabaseUnavailable) when the database could not take it in time. */
  counted: Promise<FailureWindow[]>;
  /**
   * The count's write: settled when counted in the database. While the database waits for another
   * process's lock it may still be pending, the attempt counted in this process's memory meanwhile;
   * it is `counted` itself when the first write was waited for.
   */
  written: Promise<FailureWindow[]>;
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
export function lockout(repository: LoginFailuresRepository, clock: Clock, given: LockoutOptions | (() => LockoutOptions)) {
  // A function: read at each use, so the password policy's values govern as they change (docs/security.md#password-policy).
  const current = typeof given === 'function' ? given : () => given;
  const windowMs = () => current().windowSeconds * 1000;
  let lastPrune = 0;

  const keysOf = ({ name, address }: Attempt) => ({
    pair: { account: name, address },
    address: { account: '', address },
    account: { account: name, address: '' },
  });

  /** The limit each counter of `attempt` is held to; undefined: not applied. */
  function limitOf(window: CounterKey, known: boolean): number | undefined {
    if (window.account !== '' && window.address !== '') return current().maxFailures;
    if (known) return undefined;
    return window.account === '' ? current().addressMaxFailures : current().accountMaxFailures;
  }

  /**
   * Throws TooManyRequests when a counter has more than its limit less `slack`; Retry-After until the
   * last of them ends, and the messages say which are full and until when (refusal).
   */
  function refuseIfOver(attempt: Attempt, windows: FailureWindow[], known: boolean, slack: number, now: number): void {
    let nameUntil = 0;
    let addressUntil = 0;
    for (const window of windows) {
      const limit = limitOf(window, known);
      const endsAt = window.windowStartedAt.getTime() + windowMs();
      if (limit === undefined || endsAt <= now || window.failures <= limit - slack) continue;
      if (window.account === '') addressUntil = Math.max(addressUntil, endsAt);
      else nameUntil = Math.max(nameUntil, endsAt);
    }
    const until = Math.max(nameUntil, addressUntil);
    if (until > 0) throw new LockedOut(Math.max(1, Math.ceil((until - now) / 1000)), refusal(attempt.typed ?? attempt.name, nameUntil, addressUntil, current().unlockByMail), nameUntil);
  }

  /** Remembers the address the user just logged in from, keeping the latest few. */
  async function remember(attempt: Attempt, knownSince: Date | undefined, now: Date): Promise<void> {
    if (attempt.userId === undefined) return;
    if (knownSince !== undefined && now.getTime() - knownSince.getTime() < REMEMBER_AGAIN_AFTER_MS) return;
    await repository.rememberSuccess(attempt.userId, attempt.address, now, knownSince === undefined ? KNOWN_ADDRESSES_PER_ACCOUNT : undefined);
  }

  // Attempts counted while their writes wait for the database, by counter: added to what the
  // database holds until the write lands (or, after a window of tries, is given up). Not a cache (no
  // entry may be dropped while its write waits): bounded by not deferring past MAX_UNWRITTEN.
  const unwritten = new Map<string, number>();
  const counterId = (key: CounterKey) => `${key.account}\n${key.address}`;
  const countUnwritten = (keys: CounterKey[], by: number) => {
    for (const key of keys) {
      const count = (unwritten.get(counterId(key)) ?? 0) + by;
      if (count > 0) unwritten.set(counterId(key), count);
      else unwritten.delete(counterId(key));
    }
  };

  /** Counters as the database returned them, plus the attempts counted here whose writes wait. */
  const plusUnwritten = (windows: FailureWindow[]): FailureWindow[] =>
    windows.map((window) => ({ ...window, failures: window.failures + (unwritten.get(counterId(window)) ?? 0) }));

  /** The counters as they will stand once the unwritten attempts land: what the database held, plus those. */
  function withUnwritten(keys: CounterKey[], read: FailureWindow[], now: Date, windowStart: Date): FailureWindow[] {
    return keys.map((key) => {
      const stored = read.find((window) => window.account === key.account && window.address === key.address);
      const current = stored !== undefined && stored.windowStartedAt > windowStart ? stored : undefined;
      return {
        ...key,
        failures: (current?.failures ?? 0) + (unwritten.get(counterId(key)) ?? 0),
        windowStartedAt: current?.windowStartedAt ?? now,
      };
    });
  }

  /**
   * Runs `write` until the database takes it: a DatabaseUnavailable (a lock held past the statement
   * timeout) is tried again after a pause, for up to one window; anything else, or the window passed,
   * rejects.
   */
  function persistently<T>(write: () => Promise<T>, first: Promise<T> = write()): Promise<T> {
    const giveUpAt = clock().getTime() + windowMs();
    return retry((attempt) => (attempt === 1 ? first : write()), {
      attempts: Infinity,
      delayMs: () => RETRY_PAUSE_MS,
      shouldRetry: (error) => error instanceof DatabaseUnavailable && clock().getTime() < giveUpAt,
    });
  }

  /** Writes done for an answer already given: they finish in the background, failures ignored. */
  const inBackground = (writes: Promise<unknown>) => void writes.catch(() => {});

  return {
    attempt(typedName: string, address: string | undefined, userId: number | undefined): Attempt {
      return { name: accountName(typedName), typed: typedName, address: bounded(address === undefined || address === '' ? 'unknown' : address, MAX_ADDRESS), userId };
    },

    /**
     * Counts this attempt before the password is checked, so concurrent guesses cannot all pass a
     * check made before any of them failed. Throws TooManyRequests (with Retry-After) once a
     * counter that applies has more than its limit in its window.
     */
    async charge(attempt: Attempt): Promise<ChargedAttempt> {
      const now = clock();
      const windowStart = new Date(now.getTime() - windowMs());
      const keys = keysOf(attempt);
      const counters = [keys.pair, keys.address, keys.account];
      // The same two reads for every name, known or not (user id 0 is never one).
      const [windows, knownSince] = await Promise.all([
        repository.find(counters),
        repository.lastSuccess(attempt.userId ?? 0, attempt.address),
      ]);
      const known = knownSince !== undefined;
      // Already locked: refused with these reads alone, so a flood of guesses costs no writes.
      refuseIfOver(attempt, withUnwritten(counters, windows, now, windowStart), known, 1, now.getTime());
      const firstTry = repository.charge(counters, now, windowStart);
      const counted = unwritten.size < MAX_UNWRITTEN ? await within(firstTry, WRITE_GRACE_MS) : { value: await firstTry };
      if (counted !== undefined) {
        refuseIfOver(attempt, plusUnwritten(counted.value), known, 0, now.getTime());
        if (now.getTime() - lastPrune >= PRUNE_EVERY_MS) {
          lastPrune = now.getTime();
          await repository.prune(windowStart);
        }
        return { ...attempt, knownSince, counted: firstTry, written: firstTry };
      }
      // The database is waiting for a lock: counted here now, in the database once it can be.
      countUnwritten(counters, 1);
      const written = persistently(() => repository.charge(counters, now, windowStart), firstTry).finally(() => countUnwritten(counters, -1));
      inBackground(written);
      refuseIfOver(attempt, withUnwritten(counters, windows, now, windowStart), known, 0, now.getTime());
      return { ...attempt, knownSince, counted: firstTry, written };
    },

    /**
     * The password was wrong: answered once the failure is counted in the database (503 if it cannot
     * be now; it is still written once it can), and refused 429 if that count passed a limit. The
     * database's count alone: it holds every attempt that landed before this one, and those counted
     * here in memory may be among them (their counts are let go only after the write settles).
     */
    async failed(attempt: ChargedAttempt): Promise<void> {
      refuseIfOver(attempt, await attempt.counted, attempt.knownSince !== undefined, 0, clock().getTime());
    },

    /**
     * The password was right: this name starts over from this address; the address and the name get
     * the attempt back. Written as before the answer when the count was; when the count waits for
     * the database, after it (so they never cross), in the background.
     */
    async succeeded(attempt: ChargedAttempt): Promise<void> {
      const keys = keysOf(attempt);
      const now = clock();
      if (attempt.written === attempt.counted) {
        await repository.clear(keys.pair);
        await repository.refund([keys.address, keys.account]);
        await remember(attempt, attempt.knownSince, now);
        return;
      }
      inBackground(
        attempt.written.then(async () => {
          await persistently(() => repository.clear(keys.pair));
          await persistently(() => repository.refund([keys.address, keys.account]));
          await persistently(() => remember(attempt, attempt.knownSince, now));
        }),
      );
    },

    /** The user's API key was right: nothing was counted; the address is remembered like a password login's. */
    async apiKeyAccepted(attempt: Attempt): Promise<void> {
      if (attempt.userId === undefined) return;
      const now = clock();
      const knownSince = await repository.lastSuccess(attempt.userId, attempt.address);
      const bookkeeping = persistently(() => remember(attempt, knownSince, now));
      inBackground(bookkeeping);
      await within(bookkeeping, WRITE_GRACE_MS);
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
