import type { Clock } from '../shared/clock.js';
import { type CapturedFault, type FaultContext, faultLogLimiter } from '../shared/faults.js';
import { backtraceFromStack, fingerprint, truncateBacktrace, truncateErrorClass, truncateMessage } from './grouping.js';
import type { ErrorReport } from './infrastructure-error.js';

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

/** A place faults were thrown from: its frames' scripts, and the identity worked out there. */
interface ThrowSite {
  files: Array<string | undefined>;
  /** For the application's own frames, what V8 writes of them besides their place (operationOf); undefined for library frames. */
  operations: Array<string | undefined>;
  identity: FaultIdentity;
}

/** A step along a fault's frames: the next frame's offset in its script leads on; the last one holds the places. */
interface FrameStep {
  next: Map<number, FrameStep>;
  sites: ThrowSite[];
}

const frameStep = (): FrameStep => ({ next: new Map(), sites: [] });

/**
 * What a frame's line says besides its place: `async`, `new`, the receiver's type, the function's and
 * the method's names. One place can be reached with other receivers (an inherited method called on a
 * Dog, then a Cat), and the frame then names another operation, which the fingerprint holds.
 */
const operationOf = (frame: NodeJS.CallSite) =>
  `${frame.isAsync() ? 'async ' : ''}${frame.isConstructor() ? 'new ' : ''}${frame.getTypeName() ?? ''}.${frame.getFunctionName() ?? ''} [${frame.getMethodName() ?? ''}]`;

/** Frames of Node itself and of packages: collapsed in the fingerprint, so their names do not count (docs/error-grouping.md). */
const isLibraryFile = (file: string | undefined) => file === undefined || file.startsWith('node:') || /node_modules[/\\]/.test(file);

/** Whether `frames` were thrown from `site`: the same scripts and, for the application's own frames, the same operations. */
const thrownFrom = (site: ThrowSite, frames: NodeJS.CallSite[]) =>
  site.files.length === frames.length &&
  frames.every((frame, i) => (frame.getFileName() ?? undefined) === site.files[i] && (site.operations[i] === undefined || operationOf(frame) === site.operations[i]));

/**
 * The identities of the faults seen last, by where they were thrown, so that a storm of one fault
 * works its identity out once: a fault is the same as one seen when its class, its message, and each
 * of its frames' script and offset are, and its own frames' operations (docs/operations.md#faults-of-cmi).
 * Looked up by the class, the message, then the frames' offsets (small integers, cheap to look up);
 * the scripts and operations compared at the end. At most `max` remembered; past that, all are forgotten.
 * Not an lru-cache: what is remembered is a tree walked by parts (no key is built, so a storm of one
 * fault allocates nothing to be looked up), and dropping everything at once bounds it without keeping
 * the order of use of its leaves (docs/architecture.md#caches).
 */
export function knownFaults(max = 1000) {
  let byClass = new Map<unknown, Map<unknown, FrameStep>>();
  /** Errors whose frames cannot be read without formatting their stack: by the stack's text. */
  let byStack = new Map<string, FaultIdentity>();
  let size = 0;

  const remember = () => {
    if (size < max) return (size += 1);
    byClass = new Map();
    byStack = new Map();
    return (size = 1);
  };

  return {
    get size() {
      return size;
    },

    identify(error: Error): FaultIdentity {
      const frames = callSitesOf(error);
      if (!frames) {
        const stack = error.stack ?? `${error.name}\u0000${error.message}`;
        let identity = byStack.get(stack);
        if (!identity) {
          identity = identityOf(error);
          remember();
          byStack.set(stack, identity);
        }
        return identity;
      }
      let step = byClass.get(error.name)?.get(error.message);
      for (let i = 0; step && i < frames.length; i++) step = step.next.get((frames[i] as NodeJS.CallSite).getPosition());
      const seen = step?.sites.find((site) => thrownFrom(site, frames));
      if (seen) return seen.identity;

      const identity = identityOf(error);
      remember();
      let byMessage = byClass.get(error.name);
      if (!byMessage) byClass.set(error.name, (byMessage = new Map<unknown, FrameStep>()));
      let path = byMessage.get(error.message);
      if (!path) byMessage.set(error.message, (path = frameStep()));
      for (const frame of frames) {
        const position = frame.getPosition();
        let next: FrameStep | undefined = path.next.get(position);
        if (!next) path.next.set(position, (next = frameStep()));
        path = next;
      }
      const files = frames.map((frame) => frame.getFileName() ?? undefined);
      path.sites.push({ files, operations: frames.map((frame, i) => (isLibraryFile(files[i]) ? undefined : operationOf(frame))), identity });
      return identity;
    },
  };
}

export type KnownFaults = ReturnType<typeof knownFaults>;

/** The text kept with an occurrence of a fault: where it happened, in which process. */
function contextText(context: FaultContext, identity: ProcessIdentity): string {
  return JSON.stringify({ method: context.method, route: context.route, pid: process.pid, version: identity.version });
}

/**
 * A thrown value as one occurrence to record. `known` remembers identities by where the fault was
 * thrown, so a storm of one fault works its identity out once.
 */
export function reportOfFault(fault: unknown, context: FaultContext, identity: ProcessIdentity, at: Date, known?: KnownFaults): ErrorReport {
  const error = errorOf(fault);
  return occurrence(known ? known.identify(error) : identityOf(error), context, identity, at);
}

const errorOf = (fault: unknown): Error => (fault instanceof Error ? fault : new Error(String(fault)));

function occurrence(parts: FaultIdentity, context: FaultContext, identity: ProcessIdentity, at: Date): ErrorReport {
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
    context: contextText(context, identity),
  };
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
  const known = knownFaults();

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
      () => {
        inFlight = [];
      },
      // Not lost: held again, merged with whatever came meanwhile, for the next write (and no longer
      // in flight, so a dying process spools it once).
      () => {
        inFlight = [];
        batch.forEach(hold);
      },
    ).finally(() => {
      writing = undefined;
    });
    return writing;
  };

  const timer = setInterval(() => void flush(), options.flushIntervalMs);
  timer.unref();

  return {
    capture(fault: unknown, context: FaultContext): CapturedFault {
      const at = clock();
      const parts = known.identify(errorOf(fault));
      const { fingerprint } = parts;
      const before = held.get(fingerprint);
      if (before) {
        // A repeat of a fault held: counted, its latest detail kept, in place (as hold does, allocating nothing).
        before.count += 1;
        if (at >= before.occurred_at) {
          before.error_class = parts.error_class;
          before.message = parts.message;
          before.backtrace = parts.backtrace;
          before.occurred_at = at;
          before.component = context.component;
          before.request_id = context.request_id ?? null;
          before.context = contextText(context, identity);
        }
      } else {
        held.set(fingerprint, occurrence(parts, context, identity, at));
        if (held.size >= options.maxFingerprints) void flush();
      }
      const { log, repeated } = mayLog(fingerprint, at);
      return { fingerprint, log, repeated };
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
