import type { Clock } from '../shared/clock.js';

export interface Leases {
  /** True when this caller now holds `name` until `until` (no one held it at `now`). */
  claim(name: string, until: Date, now: Date): Promise<boolean>;
}

/**
 * The error tracker's retention (docs/operations.md#retention), run by exactly one process per
 * interval however many serve the database: each run first claims a lease in the database for the
 * interval, and a process that finds it held does nothing.
 */
export function retentionJob(prune: () => Promise<{ errors: number; buckets: number }>, leases: Leases, clock: Clock, intervalMs: number) {
  return {
    async run(): Promise<{ ran: false } | { ran: true; errors: number; buckets: number }> {
      const now = clock();
      if (!(await leases.claim('errors_retention', new Date(now.getTime() + intervalMs), now))) return { ran: false };
      return { ran: true, ...(await prune()) };
    },
  };
}

/** Runs `job` every `intervalMs` (first after `firstAfterMs`) until stopped; a failure goes to `onFault`. */
export function every(intervalMs: number, firstAfterMs: number, job: () => Promise<unknown>, onFault: (error: unknown) => void) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  const tick = () => {
    running = job().catch(onFault).finally(() => {
      running = undefined;
    });
  };
  timer = setTimeout(function next() {
    tick();
    timer = setTimeout(next, intervalMs).unref();
  }, firstAfterMs).unref();
  return {
    /** Stops the timer and waits for a run in progress. */
    async stop(): Promise<void> {
      clearTimeout(timer);
      await running;
    },
  };
}
