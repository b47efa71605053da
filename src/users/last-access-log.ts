import type { Clock } from '../shared/clock.js';
import type { AccessCredential, AccessEntry } from './last-access-log.store.js';

/** Rows kept per user: older ones go as new ones are written (docs/security.md#the-last-access-log). */
export const ACCESS_LOG_KEPT_PER_USER = 100;

/** Longest user agent kept, in characters; a longer one is cut. */
export const USER_AGENT_MAX = 255;

/** Entries noted and not yet written, at most; past it, new ones are dropped until a write. */
const MAX_PENDING = 10_000;

export interface AccessLogOptions {
  /** How long a noted entry waits, so the entries of that time are written together. */
  delayMs: number;
  keepPerUser: number;
}

export const ACCESS_LOG: AccessLogOptions = { delayMs: 1_000, keepPerUser: ACCESS_LOG_KEPT_PER_USER };

/** The User-Agent header as the log keeps it: control characters dropped, at most USER_AGENT_MAX characters, null when empty. */
export function boundedUserAgent(header: string | undefined): string | null {
  if (header === undefined) return null;
  // eslint-disable-next-line no-control-regex
  const text = [...header.replace(/[\u0000-\u001f\u007f]/g, '')].slice(0, USER_AGENT_MAX).join('').trim();
  return text === '' ? null : text;
}

/** What authentication tells of one sign-in (users/authentication.ts). */
export interface SignInNote {
  userId: number;
  address: string;
  credential: AccessCredential;
  userAgent?: string | undefined;
  success: boolean;
}

/**
 * The last access log's writer (docs/security.md#the-last-access-log): a sign-in is noted in memory
 * (no I/O on the request's path) and the entries noted are written together `delayMs` later, in one
 * transaction, apart from every request, as API keys' use is (users/api-key-usage.ts). Only
 * verifications are noted, never a request answered from the verification cache. A failed write is
 * dropped and reported: it is bookkeeping, never a reason to refuse or slow a sign-in.
 */
export function accessLog(
  write: (entries: readonly AccessEntry[], keepPerUser: number) => Promise<void>,
  clock: Clock,
  onError: (error: unknown) => void,
  options: AccessLogOptions = ACCESS_LOG,
) {
  let pending: AccessEntry[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  function flush(): Promise<void> {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return writing;
    writing = writing.then(() => write(batch, options.keepPerUser)).catch(onError);
    return writing;
  }

  return {
    /** A sign-in of a user (or a refused one) happened now. */
    note({ userId, address, credential, userAgent, success }: SignInNote): void {
      if (pending.length >= MAX_PENDING) return;
      pending.push({ userId, ip: address.slice(0, 64), credential, userAgent: boundedUserAgent(userAgent), success, at: clock() });
      if (timer === undefined) {
        timer = setTimeout(() => void flush(), options.delayMs);
        timer.unref();
      }
    },

    /** Writes what is noted now (the server closing); settles when it is written. */
    flush,
  };
}

export type AccessLog = ReturnType<typeof accessLog>;
