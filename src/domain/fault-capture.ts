import type { Clock } from './clock.js';
import { backtraceFromStack, fingerprint, truncateBacktrace, truncateErrorClass, truncateMessage } from './error-grouping.js';
import type { ErrorReport } from '../store/infrastructure-errors-repository.js';

/** Where a fault happened: the request it broke, or the background work it stopped. */
export interface FaultContext {
  request_id?: string;
  method?: string;
  /** The route pattern (`/users/:id`), never the raw URL. */
  route?: string;
  /** What was running: `request`, or a background job's name. */
  component: string;
}

/** The process a fault happened in, kept with each occurrence. */
export interface ProcessIdentity {
  host: string;
  version: string;
}

type FaultIdentity = Pick<ErrorReport, 'fingerprint' | 'error_class' | 'message' | 'backtrace'>;

const withoutNul = (text: string) => text.replaceAll('\u0000', '\uFFFD');

/** What a thrown value says about itself: class, message, backtrace, fingerprint (truncated like any report: docs/limits.md). */
function identityOf(error: Error): FaultIdentity {
  const error_class = truncateErrorClass(withoutNul(error.name || error.constructor.name || 'Error')) || 'Error';
  const message = truncateMessage(withoutNul(error.message));
  const backtrace = truncateBacktrace(withoutNul(backtraceFromStack(error.stack)));
  return { fingerprint: fingerprint(error_class, backtrace, message), error_class, message, backtrace };
}

/** The identities of the faults seen last, by their stack text: a storm of one fault parses its stack once. */
const KNOWN_FAULTS_MAX = 1000;

/**
 * A thrown value as one occurrence to record. `known` remembers identities by the error's stack
 * text (which holds its class and message), since working one out costs more than the rest of a
 * failed request.
 */
export function reportOfFault(fault: unknown, context: FaultContext, identity: ProcessIdentity, at: Date, known?: Map<string, FaultIdentity>): ErrorReport {
  const error = fault instanceof Error ? fault : new Error(String(fault));
  // The stack text starts with the class and the message, so it names the fault whole.
  const key = error.stack ?? `${error.name}\u0000${error.message}`;
  let parts = known?.get(key);
  if (!parts) {
    parts = identityOf(error);
    if (known) {
      if (known.size >= KNOWN_FAULTS_MAX) known.clear();
      known.set(key, parts);
    }
  }
  return {
    fingerprint: parts.fingerprint,
    error_class: parts.error_class,
    message: parts.message,
    backtrace: parts.backtrace,
    occurred_at: at,
    count: 1,
    host: identity.host,
    component: context.component,
    request_id: context.request_id ?? null,
    context: JSON.stringify({ method: context.method, route: context.route, pid: process.pid, version: identity.version }),
  };
}

/** How often one fault is logged, and how many fingerprints are remembered for that. */
export const faultLogLimits = { intervalMs: 1000, fingerprints: 1000 };

/**
 * Logs each fault at most once per interval per fingerprint, so a storm of one fault writes one line a
 * second carrying how many it stood for (docs/operations.md#log-storms). Memory is bounded: past
 * `fingerprints` remembered, the one logged longest ago is forgotten (its unlogged count with it).
 */
export function faultLogLimiter(clock: Clock, limits = faultLogLimits) {
  // Insertion order is the order of last logging: each logged fingerprint moves to the end.
  const lastLogged = new Map<string, { at: number; unlogged: number }>();
  return (fingerprint: string): { log: boolean; repeated: number } => {
    const now = clock().getTime();
    const seen = lastLogged.get(fingerprint);
    if (seen && now >= seen.at && now - seen.at < limits.intervalMs) {
      seen.unlogged += 1;
      return { log: false, repeated: 0 };
    }
    lastLogged.delete(fingerprint);
    if (lastLogged.size >= limits.fingerprints) lastLogged.delete(lastLogged.keys().next().value as string);
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

export interface FaultCaptureOptions {
  /** Faults are written at least this often, in ms. */
  flushIntervalMs: number;
  /** Distinct faults held before a write is started early. */
  maxFingerprints: number;
}

/**
 * cmi's own faults (docs/operations.md#faults-of-cmi): coalesced in memory per fingerprint (a storm
 * of one fault is one report with its count and its latest context) and written at least every
 * `flushIntervalMs`, and on `stop`. A write that fails keeps its counts for the next one. `pending`
 * lets a dying process spool what it holds synchronously (docs/operations.md#faults-of-cmi).
 */
export function faultCapture(
  record: (reports: ErrorReport[]) => Promise<unknown>,
  clock: Clock,
  identity: ProcessIdentity,
  options: FaultCaptureOptions,
) {
  let held = new Map<string, ErrorReport>();
  let writing: Promise<void> | undefined;
  /** The batch being written: still the process's to spool should it die before the write ends. */
  let inFlight: ErrorReport[] = [];
  const mayLog = faultLogLimiter(clock);
  const known = new Map<string, FaultIdentity>();

  const hold = (report: ErrorReport) => {
    const before = held.get(report.fingerprint);
    if (!before) {
      held.set(report.fingerprint, report);
      return;
    }
    // The later one's detail, both counts (in place: a storm allocates nothing here).
    const count = before.count + report.count;
    if (report.occurred_at >= before.occurred_at) Object.assign(before, report);
    before.count = count;
  };

  const flush = (): Promise<void> => {
    if (writing) return writing.then(flush);
    if (held.size === 0) return Promise.resolve();
    const batch = [...held.values()];
    held = new Map();
    inFlight = batch;
    writing = record(batch).then(
      () => undefined,
      // Not lost: held again, merged with whatever came meanwhile, for the next write.
      () => batch.forEach(hold),
    ).finally(() => {
      inFlight = [];
      writing = undefined;
    });
    return writing;
  };

  const timer = setInterval(() => void flush(), options.flushIntervalMs);
  timer.unref();

  return {
    capture(fault: unknown, context: FaultContext): CapturedFault {
      const report = reportOfFault(fault, context, identity, clock(), known);
      hold(report);
      if (held.size >= options.maxFingerprints) void flush();
      return { fingerprint: report.fingerprint, ...mayLog(report.fingerprint) };
    },

    /** Writes what is held now; a failed write keeps it held (never rejects). */
    flush,

    /**
     * What is not yet known to be written, the batch being written included: for a process about to
     * die. (A batch that committed just before the death may so be counted twice; never lost.)
     */
    pending: (): ErrorReport[] => [...inFlight, ...held.values()],

    /** Stops the timer and writes what is held. */
    async stop(): Promise<void> {
      clearInterval(timer);
      await flush();
    },
  };
}

export type FaultCapture = ReturnType<typeof faultCapture>;
