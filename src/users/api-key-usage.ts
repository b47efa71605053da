import type { Clock } from '../shared/clock.js';

export interface ApiKeyUsageOptions {
  /** A key's use is written at most once in this many milliseconds (per process). */
  everyMs: number;
  /** How long a noted use waits, so the uses of that time are written together. */
  delayMs: number;
}

export const API_KEY_USAGE: ApiKeyUsageOptions = { everyMs: 60_000, delayMs: 1_000 };

/**
 * When each API key was last used (docs/security.md#api-keys), without a write per request: a use is
 * noted in memory (a map lookup, on the cached path too) only when the key's last noted use in this
 * process is `everyMs` old, and the uses noted are written together `delayMs` later, in one
 * transaction, apart from every request. So `last_used_at` is late by at most `everyMs + delayMs`
 * plus the write. A failed write is dropped (the next use notes the key again): it is bookkeeping,
 * never a reason to refuse or slow a request.
 */
export function apiKeyUsage(
  write: (uses: ReadonlyMap<number, string>) => Promise<void>,
  clock: Clock,
  onError: (error: unknown) => void,
  options: ApiKeyUsageOptions = API_KEY_USAGE,
) {
  /** Key id to when its use was last noted (ms); entries older than everyMs go at each write. */
  const noted = new Map<number, number>();
  let pending = new Map<number, string>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  function flush(): Promise<void> {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = new Map();
    const now = clock().getTime();
    for (const [id, at] of noted) if (now - at >= options.everyMs) noted.delete(id);
    if (batch.size === 0) return writing;
    writing = writing.then(() => write(batch)).catch((error: unknown) => {
      for (const id of batch.keys()) noted.delete(id);
      onError(error);
    });
    return writing;
  }

  return {
    /** Key `id` authenticated a request now. */
    used(id: number): void {
      const now = clock().getTime();
      const last = noted.get(id);
      if (last !== undefined && now - last < options.everyMs) return;
      noted.set(id, now);
      pending.set(id, new Date(now).toISOString());
      if (timer === undefined) {
        timer = setTimeout(() => void flush(), options.delayMs);
        timer.unref();
      }
    },

    /** Writes what is noted now (the server closing); settles when it is written. */
    flush,
  };
}

export type ApiKeyUsage = ReturnType<typeof apiKeyUsage>;
