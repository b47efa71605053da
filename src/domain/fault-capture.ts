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

/** The identities of the faults seen last, by where they were thrown: a storm of one fault formats its stack once. */
const KNOWN_FAULTS_MAX = 1000;

const asCallSites = (_error: Error, sites: NodeJS.CallSite[]) => sites;

/** Where an error whose stack was read as call sites keeps them until its `stack` is read as text. */
const FRAMES = Symbol('cmi.frames');
/** V8's call sites write themselves as a stack line does (`toString`, which Node's types leave out). */
type WithFrames = Error & { [FRAMES]?: Array<NodeJS.CallSite & { toString(): string }> };

/** V8's own `stack` is a non-enumerable, writable, configurable property of the error. */
const stackProperty = (value: unknown): PropertyDescriptor => ({ value, writable: true, configurable: true, enumerable: false });

/**
 * `stack` formatted from the kept call sites when first read, as V8 writes it: the error's own text,
 * then a line per frame. One accessor for every error (a closure per error would give each error a
 * hidden class of its own, which costs more than formatting would).
 */
const deferredStack: PropertyDescriptor = {
  configurable: true,
  enumerable: false,
  get(this: WithFrames) {
    const text = [String(this), ...(this[FRAMES] ?? []).map((site) => `    at ${site.toString()}`)].join('\n');
    Object.defineProperty(this, 'stack', stackProperty(text));
    return text;
  },
  set(this: WithFrames, value: unknown) {
    Object.defineProperty(this, 'stack', stackProperty(value));
  },
};

/**
 * The frames of `error`, read without formatting its stack (formatting costs more than the rest of a
 * failed request); its `stack` is formatted from them if and when it is read. Undefined when the
 * stack was read already, or source maps are on (Node's own formatting applies them).
 */
function callSitesOf(error: Error): NodeJS.CallSite[] | undefined {
  // A sealed or frozen error keeps its stack as V8 made it. (Reading the property's descriptor to
  // ask would format the stack.)
  if (process.sourceMapsEnabled || !Object.isExtensible(error)) return undefined;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be put back, never called here
  const saved = Error.prepareStackTrace;
  Error.prepareStackTrace = asCallSites;
  let sites: unknown;
  try {
    sites = error.stack;
  } finally {
    Error.prepareStackTrace = saved;
  }
  if (!Array.isArray(sites)) return undefined;
  (error as WithFrames)[FRAMES] = sites as NodeJS.CallSite[];
  Object.defineProperty(error, 'stack', deferredStack);
  return sites as NodeJS.CallSite[];
}

/** A key naming a fault whole: its class, its message and where each of its frames is (script and offset). */
function faultKey(error: Error): string {
  const sites = callSitesOf(error);
  if (!sites) return error.stack ?? `${error.name}\u0000${error.message}`;
  let key = `${error.name}\u0000${error.message}`;
  for (const site of sites) key += `\u0000${site.getFileName() ?? ''}@${site.getPosition()}`;
  return key;
}

/**
 * A thrown value as one occurrence to record. `known` remembers identities by where the fault was
 * thrown (faultKey), so a storm of one fault works its identity out once.
 */
export function reportOfFault(fault: unknown, context: FaultContext, identity: ProcessIdentity, at: Date, known?: Map<string, FaultIdentity>): ErrorReport {
  const error = fault instanceof Error ? fault : new Error(String(fault));
  const key = faultKey(error);
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
