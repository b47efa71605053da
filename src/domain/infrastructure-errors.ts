import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { type Actor, assertAdmin } from './authorization.js';
import type { Clock } from './clock.js';
import { FieldErrors, NotFound } from './errors.js';
import { infrastructureErrorLimits } from './limits.js';
import type { InfrastructureError } from './records.js';
import { stringField, unwrapRecord } from './request-body.js';
import type { ErrorOccurrence, InfrastructureErrorsRepository } from '../store/infrastructure-errors-repository.js';

/** Line and column numbers: `:42` or `:42:17` before `:`, `)`, white space or the end; `line 42`. */
const LINE_NUMBERS = /:\d+(?=[:)\s]|$)|\bline \d+/g;

/**
 * The fingerprint that groups occurrences of one error: SHA-256 (64 lowercase hex) of the error class
 * and the backtrace's frames, each trimmed and stripped of line and column numbers, so the same fault
 * at a shifted line counts as one. Without frames the message stands in for them.
 */
export function fingerprint(errorClass: string, backtrace: string, message: string): string {
  const frames = backtrace
    .split('\n')
    .map((frame) => frame.trim().replace(LINE_NUMBERS, (match) => (match.startsWith(':') ? '' : 'line')))
    .filter((frame) => frame !== '');
  const identity = [errorClass.trim(), ...(frames.length > 0 ? frames : [message.trim()])].join('\n');
  return createHash('sha256').update(identity).digest('hex');
}

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `    at findUser (/srv/cmi/src/store/users.ts:42:17)` or `    at /srv/cmi/src/x.ts:3:9`. */
const V8_FRAME = /^\s*at (?:(.+?) \((.+):(\d+):\d+\)|(.+):(\d+):\d+)$/;

/**
 * A V8 stack in the backtrace form of docs/api.md#infrastructure-errors: one frame per line, `src/store/users.ts:42:in 'findUser'`. Frames
 * below the outermost one of cmi's own code (the framework calling in) are left out: they differ with
 * how the request got there, and would split one fault into several fingerprints.
 */
export function backtraceFromStack(stack: string | undefined): string {
  if (!stack) return '';
  const frames: string[] = [];
  for (const line of stack.split('\n')) {
    const match = V8_FRAME.exec(line);
    if (!match) continue;
    const operation = match[1] ?? '<anonymous>';
    let location = (match[2] ?? match[4] ?? '').replace(/^file:\/\//, '');
    if (location.startsWith(PROJECT_ROOT)) location = location.slice(PROJECT_ROOT.length);
    frames.push(`${location}:${match[3] ?? match[5]}:in '${operation}'`);
  }
  const outermostOwn = frames.findLastIndex((frame) => frame.startsWith('src/'));
  return (outermostOwn === -1 ? frames : frames.slice(0, outermostOwn + 1)).join('\n');
}

/** Cut to `max` characters, U+0000 replaced by U+FFFD: PostgreSQL cannot store it (docs/limits.md#nul-characters). */
const storable = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text).replaceAll('\u0000', '\uFFFD');

/** What a thrown value says about itself, as an occurrence to record. */
export function occurrenceOfFault(fault: unknown): ErrorOccurrence {
  const error = fault instanceof Error ? fault : new Error(String(fault));
  const errorClass = storable(error.name || error.constructor.name || 'Error', infrastructureErrorLimits.errorClass);
  const message = storable(error.message, infrastructureErrorLimits.errorMessage);
  const backtrace = storable(backtraceFromStack(error.stack), infrastructureErrorLimits.backtrace);
  return { error_class: errorClass, message, backtrace, fingerprint: fingerprint(errorClass, backtrace, message) };
}

/** A report from another component, validated; every bad field is named in one 422. */
export function occurrenceOfReport(body: unknown): ErrorOccurrence {
  const fields = unwrapRecord(body, 'infrastructure_error');
  const errors = new FieldErrors();
  const errorClass = stringField(fields, 'error_class', errors, { required: true, max: infrastructureErrorLimits.errorClass });
  const message = stringField(fields, 'message', errors, { required: false, max: infrastructureErrorLimits.errorMessage }) ?? '';
  const backtrace = stringField(fields, 'backtrace', errors, { required: false, max: infrastructureErrorLimits.backtrace }) ?? '';
  errors.throwIfAny();
  const error_class = (errorClass as string).trim();
  return { error_class, message, backtrace, fingerprint: fingerprint(error_class, backtrace, message) };
}

/** A fault of cmi itself, noted: what to record, and whether to log it now. */
export interface NotedFault {
  occurrence: ErrorOccurrence;
  /** False while the same fault (by fingerprint) was logged less than a second ago. */
  log: boolean;
  /** When logged: how many occurrences of it went unlogged since its last line. */
  repeated: number;
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

/** The tracker: administrators read and report errors; cmi records its own faults. */
export function infrastructureErrors(repository: InfrastructureErrorsRepository, clock: Clock) {
  const mayLog = faultLogLimiter(clock);
  return {
    async find(actor: Actor, id: number): Promise<InfrastructureError> {
      assertAdmin(actor);
      const record = await repository.findById(id);
      if (!record) throw new NotFound();
      return record;
    },

    /** Another component reports an error; `created` is true for a new fingerprint. */
    report(actor: Actor, body: unknown): Promise<{ record: InfrastructureError; created: boolean }> {
      assertAdmin(actor);
      return repository.recordOccurrence(occurrenceOfReport(body), clock());
    },

    /** A fault of cmi itself: its occurrence, and whether to log it now (see faultLogLimiter). */
    noteFault(fault: unknown): NotedFault {
      const occurrence = occurrenceOfFault(fault);
      return { occurrence, ...mayLog(occurrence.fingerprint) };
    },

    /** Records a noted fault with no one acting; every occurrence counts, logged or not. */
    recordFault: (occurrence: ErrorOccurrence) => repository.recordOccurrence(occurrence, clock()),
  };
}

export type InfrastructureErrors = ReturnType<typeof infrastructureErrors>;
