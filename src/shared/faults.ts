import { LRUCache } from 'lru-cache';
import type { Clock } from './clock.js';

// Faults of cmi itself as the layers below the tracker see them: what was running when one was thrown,
// what capturing it answers, and how often one is logged. The tracker's fault capture
// (tracker/fault-capture.ts) records them; the HTTP error handler is given it at the top (app/app.ts).

/** Where a fault happened: the request it broke, or the background work it stopped. */
export interface FaultContext {
  request_id?: string;
  method?: string;
  /** The route pattern (`/users/:id`), never the raw URL. */
  route?: string;
  /** What was running: `request`, or a background job's name. */
  component: string;
}

/** Takes a fault of cmi: records it, and says whether to log it now. */
export interface FaultCatcher {
  capture(fault: unknown, context: FaultContext): CapturedFault;
}

/** How often one fault is logged, and how many fingerprints are remembered for that. */
export const faultLogLimits = { intervalMs: 1000, fingerprints: 1000 };

/**
 * Logs each fault at most once per interval per fingerprint, so a storm of one fault writes one line a
 * second carrying how many it stood for (docs/operations.md#log-storms). Memory is bounded: past
 * `fingerprints` remembered, the one logged longest ago is forgotten (its unlogged count with it).
 */
export function faultLogLimiter(clock: Clock, limits = faultLogLimits) {
  // Recency is the order of last logging: each logged fingerprint is set again (the most recent); one
  // not logged is read with `peek`, which leaves its place, so a storm of it does not keep it longer.
  const lastLogged = new LRUCache<string, { at: number; unlogged: number }>({ max: limits.fingerprints });
  return (fingerprint: string, at?: Date): { log: boolean; repeated: number } => {
    const now = (at ?? clock()).getTime();
    const seen = lastLogged.peek(fingerprint);
    if (seen && now >= seen.at && now - seen.at < limits.intervalMs) {
      seen.unlogged += 1;
      return { log: false, repeated: 0 };
    }
    lastLogged.set(fingerprint, { at: now, unlogged: 0 });
    return { log: true, repeated: seen?.unlogged ?? 0 };
  };
}

/** A fault of cmi itself, captured: its fingerprint, and whether to log it now (see faultLogLimiter). */
export interface CapturedFault {
  fingerprint: string;
  log: boolean;
  /** When logged: how many occurrences of it went unlogged since its last line. */
  repeated: number;
}
