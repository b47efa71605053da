/** How `retry` goes on after a failed try (docs/architecture.md#retries). */
export interface RetryOptions {
  /** The most tries in all, the first included (Infinity: until `shouldRetry` says no). */
  attempts: number;
  /** The pause after failed try `attempt` (1 for the first), before the next; none when absent or 0. */
  delayMs?: (attempt: number) => number;
  /** Whether what failed try `attempt` threw is worth another try; no: it is thrown. */
  shouldRetry: (error: unknown, attempt: number) => boolean;
  /** Once aborted, a pause ends at once and no try follows: the last failure is thrown. */
  signal?: AbortSignal;
}

/** Waits `ms`, or less if `signal` aborts first (on the timers every clock of cmi's lets run). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}

/**
 * Runs `fn` (given the try's number, 1 for the first) until it settles with a value, at most
 * `attempts` times, pausing `delayMs(attempt)` between tries; a failure `shouldRetry` turns down, the
 * last try's, or the one before `signal` aborted, is thrown as it was.
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (attempt >= options.attempts || !options.shouldRetry(error, attempt)) throw error;
      const delay = options.delayMs?.(attempt) ?? 0;
      if (delay > 0) await pause(delay, options.signal);
      if (options.signal?.aborted) throw error;
    }
  }
}
