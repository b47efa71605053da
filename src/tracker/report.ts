import { parseDatetime } from '../shared/datetime.js';
import { FieldErrors } from '../shared/problems.js';
import { fingerprint, truncateBacktrace, truncateErrorClass, truncateMessage } from './grouping.js';
import { errorReportLimits } from '../shared/limits.js';
import { stringField, unwrapRecord } from '../shared/request-body.js';
import { type ErrorReport, facetsOf } from './infrastructure-error.js';

type Fields = Record<string, unknown>;

const FINGERPRINT = /^[0-9a-f]{64}$/;

/**
 * Free text, truncated when too long, never refused for its length: a string, or (a backtrace) an
 * array of frame strings. U+0000 is refused, as in every field (docs/limits.md#nul-characters).
 */
function freeText(fields: Fields, name: string, errors: FieldErrors, { frames }: { frames: boolean }): string | undefined {
  const value = fields[name];
  if (value === undefined || value === null) return undefined;
  const text = typeof value === 'string' ? value
    : frames && Array.isArray(value) && value.every((frame) => typeof frame === 'string') ? value.join('\n')
    : undefined;
  if (text === undefined) {
    errors.add(name, frames ? 'must be a string or an array of strings' : 'must be a string');
    return undefined;
  }
  if (text.includes('\u0000')) {
    errors.add(name, 'must not contain the NUL character (U+0000)');
    return undefined;
  }
  return text;
}

/** An optional name (host, component, request id): trimmed; blank is the same as absent. */
function name(fields: Fields, field: string, errors: FieldErrors): string | null {
  const value = stringField(fields, field, errors, { required: false, max: errorReportLimits.nameChars });
  return value === undefined || value.trim() === '' ? null : value.trim();
}

function count(fields: Fields, errors: FieldErrors): number {
  const value = fields.count;
  if (value === undefined || value === null) return 1;
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d{1,6}\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(number) || number < 1 || number > errorReportLimits.maxCount) {
    errors.add('count', `must be an integer from 1 to ${errorReportLimits.maxCount}`);
    return 1;
  }
  return number;
}

function occurredAt(fields: Fields, errors: FieldErrors, now: Date): Date {
  const value = fields.occurred_at;
  if (value === undefined || value === null || value === '') return now;
  const at = typeof value === 'string' ? parseDatetime(value) : undefined;
  if (!at) {
    errors.add('occurred_at', 'must be a datetime such as 2026-11-20T10:00:00+00:00');
    return now;
  }
  if (at.getTime() > now.getTime() + errorReportLimits.futureSkewMs) {
    errors.add('occurred_at', 'must not be more than 5 minutes in the future');
    return now;
  }
  return at;
}

/**
 * True when `value` holds objects or arrays nested deeper than `max` levels (`value` itself counting
 * as the first). Iterative, so no nesting can overflow the stack; stops at the first level too deep.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return true;
    for (const inner of Object.values(node)) if (typeof inner === 'object' && inner !== null) stack.push([inner, depth + 1]);
  }
  return false;
}

/** A JSON object (or, from XML, its text) of at most 32 levels and 16 KiB serialized, kept as text, and its facets. */
function context(fields: Fields, errors: FieldErrors): { text: string; facets: ReturnType<typeof facetsOf> } | null {
  let value = fields.context;
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      errors.add('context', 'must be a JSON object');
      return null;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.add('context', 'must be a JSON object');
    return null;
  }
  // Before serializing it: a nesting deep enough would overflow JSON.stringify's stack.
  if (nestedDeeperThan(value, errorReportLimits.contextDepth)) {
    errors.add('context', `is nested too deeply (maximum is ${errorReportLimits.contextDepth} levels of objects and arrays)`);
    return null;
  }
  let nul = false;
  const text = JSON.stringify(value, (key, inner: unknown) => {
    if (key.includes('\u0000') || (typeof inner === 'string' && inner.includes('\u0000'))) nul = true;
    return inner;
  });
  if (nul) {
    errors.add('context', 'must not contain the NUL character (U+0000)');
    return null;
  }
  if (Buffer.byteLength(text) > errorReportLimits.contextBytes) {
    errors.add('context', `is too large (maximum is ${errorReportLimits.contextBytes} bytes as JSON)`);
    return null;
  }
  return { text, facets: facetsOf(value) };
}

/**
 * A report from another component (docs/api.md#post-sysadmin_toolsinfrastructureerrors), validated: every bad field is named
 * in one 422. Over-long text is truncated and marked, never refused (docs/limits.md).
 */
export function parseErrorReport(body: unknown, now: Date): ErrorReport {
  const fields = unwrapRecord(body, 'infrastructure_error');
  const errors = new FieldErrors();
  const rawClass = freeText(fields, 'error_class', errors, { frames: false });
  if (rawClass !== undefined && rawClass.trim() === '') errors.add('error_class', "can't be blank");
  if (rawClass === undefined && !errors.has('error_class')) errors.add('error_class', "can't be blank");
  const message = truncateMessage(freeText(fields, 'message', errors, { frames: false }) ?? '');
  const backtrace = truncateBacktrace(freeText(fields, 'backtrace', errors, { frames: true }) ?? '');
  const given = fields.fingerprint;
  if (given !== undefined && given !== null && given !== '' && (typeof given !== 'string' || !FINGERPRINT.test(given))) {
    errors.add('fingerprint', 'must be 64 lowercase hexadecimal characters (a SHA-256)');
  }
  const report = {
    occurred_at: occurredAt(fields, errors, now),
    count: count(fields, errors),
    host: name(fields, 'host', errors),
    component: name(fields, 'component', errors),
    request_id: name(fields, 'request_id', errors),
  };
  const givenContext = context(fields, errors);
  errors.throwIfAny();
  const error_class = truncateErrorClass(rawClass as string);
  return {
    fingerprint: typeof given === 'string' && given !== '' ? given : fingerprint(error_class, backtrace, message),
    error_class,
    message,
    backtrace,
    ...report,
    context: givenContext?.text ?? null,
    ...(givenContext?.facets ? { facets: givenContext.facets } : {}),
  };
}
