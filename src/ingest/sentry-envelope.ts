import { MalformedRequest, PayloadTooLarge } from '../shared/problems.js';
import { parseSkipping } from './json-skip.js';
import type { BodyHead } from './sentry-body.js';
import { SENTRY_LIMITS } from './sentry-body.js';

/** One item of an envelope: its header and its payload's bytes. */
export interface EnvelopeItem {
  type: string;
  payload: Buffer;
}

export interface Envelope {
  header: Record<string, unknown>;
  items: EnvelopeItem[];
}

const NEWLINE = 0x0a;

/** `parse`: JSON.parse, or one that leaves out what is never read (json-skip.ts). */
function jsonObject(bytes: Buffer, what: string, parse: (text: string) => unknown = JSON.parse): Record<string, unknown> {
  let value: unknown;
  try {
    value = parse(bytes.toString('utf8'));
  } catch {
    throw new MalformedRequest(400, `The ${what} is not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new MalformedRequest(400, `The ${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

/**
 * Where the header line that starts at `at` ends (its newline, or the body's end), searched no
 * further than SENTRY_LIMITS.headerBytes: a longer line is 413 unread (docs/sentry.md#limits).
 */
function headerLineEnd(body: Buffer, at: number, what: string): number {
  const bound = SENTRY_LIMITS.headerBytes;
  const found = body.subarray(at, at + bound + 1).indexOf(NEWLINE);
  if (found !== -1) return at + found;
  if (body.length - at > bound) throw new PayloadTooLarge(bound, `The ${what} is longer than the limit of ${bound} bytes`);
  return -1;
}

/**
 * The envelope header from the first bytes of the body (decodeSentryHead): a line of at most
 * SENTRY_LIMITS.headerBytes, 413 beyond; without a newline 400.
 */
export function envelopeHeaderOf(head: BodyHead): Record<string, unknown> {
  const end = headerLineEnd(head.bytes, 0, 'envelope header');
  if (end === -1 && !head.whole) throw new PayloadTooLarge(SENTRY_LIMITS.headerBytes, `The envelope header is longer than the limit of ${SENTRY_LIMITS.headerBytes} bytes`);
  if (end === -1) throw new MalformedRequest(400, 'The envelope header is not followed by a newline');
  return jsonObject(head.bytes.subarray(0, end), 'envelope header');
}

/**
 * Items that are an event as Sentry's Relay counts them: at most one of these in an envelope
 * (docs/sentry.md#limits). Only `event` is recorded; the others are dropped.
 */
const EVENT_LIKE = new Set(['event', 'transaction', 'security', 'raw_security', 'replay_event', 'user_report_v2', 'form_data']);

/**
 * Reads an envelope (https://develop.sentry.dev/sdk/envelopes/): a header line, then items, each a
 * header line and a payload, either `length` bytes (then an optional newline) or up to the next
 * newline. A header without a newline, an item whose length runs past the body, or a header that is
 * not a JSON object: 400. A header line longer than SENTRY_LIMITS.headerBytes, more than
 * SENTRY_LIMITS.items items, or more than one event: 413 (docs/sentry.md#limits).
 */
export function parseEnvelope(body: Buffer): Envelope {
  const header = envelopeHeaderOf({ bytes: body, whole: true });
  const items: EnvelopeItem[] = [];
  let events = 0;
  let at = headerLineEnd(body, 0, 'envelope header') + 1;
  while (at < body.length) {
    const lineEnd = headerLineEnd(body, at, 'item header');
    const headerBytes = body.subarray(at, lineEnd === -1 ? body.length : lineEnd);
    // Blank lines between items (a trailing newline) are not items.
    if (headerBytes.toString('utf8').trim() === '') {
      at = lineEnd === -1 ? body.length : lineEnd + 1;
      continue;
    }
    if (items.length === SENTRY_LIMITS.items) throw new PayloadTooLarge(SENTRY_LIMITS.items, `An envelope holds at most ${SENTRY_LIMITS.items} items`);
    const itemHeader = jsonObject(headerBytes, 'item header');
    const type = typeof itemHeader.type === 'string' ? itemHeader.type : '';
    if (type === '') throw new MalformedRequest(400, 'An envelope item has no type');
    if (EVENT_LIKE.has(type) && (events += 1) > 1) throw new PayloadTooLarge(SENTRY_LIMITS.eventBytes, 'An envelope holds at most one event (an event, transaction or security item)');
    at = lineEnd === -1 ? body.length : lineEnd + 1;
    let payload: Buffer;
    const length = itemHeader.length;
    if (length !== undefined && length !== null) {
      if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) throw new MalformedRequest(400, 'An envelope item\'s length is not a length');
      if (at + length > body.length) throw new MalformedRequest(400, 'An envelope item is shorter than its length says');
      payload = body.subarray(at, at + length);
      at += length;
      if (body[at] === NEWLINE) at += 1;
    } else {
      const payloadEnd = body.indexOf(NEWLINE, at);
      payload = body.subarray(at, payloadEnd === -1 ? body.length : payloadEnd);
      at = payloadEnd === -1 ? body.length : payloadEnd + 1;
    }
    if (type === 'event' && payload.length > SENTRY_LIMITS.eventBytes) throw new PayloadTooLarge(SENTRY_LIMITS.eventBytes);
    items.push({ type, payload });
  }
  return { header, items };
}

/** The breadcrumbs, checked but not built: nothing of them is recorded (docs/sentry.md#what-is-recorded). */
const eventJson = (text: string) => parseSkipping(text, 'breadcrumbs');

/** An event's JSON (a store body or an event item), without its breadcrumbs. */
export function parseEvent(bytes: Buffer): Record<string, unknown> {
  if (bytes.length > SENTRY_LIMITS.eventBytes) throw new PayloadTooLarge(SENTRY_LIMITS.eventBytes);
  return jsonObject(bytes, 'event', eventJson);
}
