/**
 * The audit trail's model (docs/api.md#audit-log, docs/security.md#the-audit-trail): who changed what,
 * how it proved who it was, and what changed, never a secret.
 */

import { CREDENTIALS } from './audit-event.resource.js';

/** How the actor proved who it was (docs/security.md#the-audit-trail). */
export type Credential = (typeof CREDENTIALS)[number];

/**
 * Who acts, as the trail records it: a user through the API or the console (its id; its login, the
 * credential, address and request id from the request), or cmi itself and the operator's local
 * commands (id null, login `system`). roles/authorization.ts's Actor is one.
 */
export interface AuditActor {
  id: number | null;
  login?: string;
  credential?: Credential;
  address?: string;
  requestId?: string;
}

/** What a change records besides who made it. */
export interface AuditEntry {
  /** `<target>.<verb>`, e.g. `user.update` (docs/security.md#what-is-audited). */
  action: string;
  target_type: string;
  target_id: number | null;
  /** What changed: `{"field": [before, after]}` for an edit, the fields given for a creation, counts for a bulk change. */
  changes?: Record<string, unknown>;
}

/** One row of the trail, as served. */
export interface AuditEvent {
  id: number;
  at: Date;
  actor_id: number | null;
  actor_login: string;
  credential: string;
  address: string | null;
  request_id: string | null;
  action: string;
  target_type: string;
  target_id: number | null;
  /** The JSON object's text. */
  changes: string;
}

/** cmi acting by itself (retention, the first administrator): no user, login `system`. */
export const SYSTEM_ACTOR: AuditActor = { id: null, login: 'system', credential: 'system' };

export const REDACTED = '[redacted]';

/**
 * Fields whose values are never stored (passwords, their hashes, API keys, secrets, tokens, ingest
 * keys' public keys and DSNs): a change to one is recorded as `[redacted]`, so the trail says that it
 * changed, never to what.
 */
const SECRET_FIELD = /password|passwd|api_key|apikey|secret|token|hash|cookie|dsn|^key$|public_key|private_key|credential/i;

/** A string kept in `changes` is cut to this many characters (a note's body, a long label). */
export const MAX_TEXT = 200;
/** Depth and width kept of a value in `changes`. */
const MAX_DEPTH = 4;
const MAX_ITEMS = 100;

function safeValue(value: unknown, depth: number): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (typeof value === 'string') return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}…` : value;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return Number(value);
  if (depth >= MAX_DEPTH) return '…';
  if (value instanceof Set) return safeValue([...value], depth);
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((item) => safeValue(item, depth + 1));
  if (typeof value === 'object') return safeObject(value as Record<string, unknown>, depth + 1);
  return typeof value === 'symbol' ? value.toString() : null;
}

function safeObject(object: Record<string, unknown>, depth: number): Record<string, unknown> {
  const safe: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(object).slice(0, MAX_ITEMS)) {
    if (value === undefined) continue;
    safe[name] = SECRET_FIELD.test(name) ? REDACTED : safeValue(value, depth);
  }
  return safe;
}

/** `changes` as stored: secrets redacted at any depth, long texts cut, dates as ISO 8601. */
export const safeChanges = (changes: Record<string, unknown> | undefined): Record<string, unknown> => safeObject(changes ?? {}, 0);

const same = (a: unknown, b: unknown): boolean => JSON.stringify(safeValue(a, 0)) === JSON.stringify(safeValue(b, 0));

/**
 * `{"field": [before, after]}` for each of `fields` (all of `after`'s when not given) whose value
 * differs between the two records.
 */
export function difference(before: object, after: object, fields?: readonly string[]): Record<string, [unknown, unknown]> {
  const was = before as Record<string, unknown>;
  const now = after as Record<string, unknown>;
  const changed: Record<string, [unknown, unknown]> = {};
  for (const name of fields ?? Object.keys(now)) {
    if (!same(was[name], now[name])) changed[name] = [was[name] ?? null, now[name] ?? null];
  }
  return changed;
}

/** The fields of a new record that `fields` name, as `changes` of its creation. */
export function created(record: object, fields: readonly string[]): Record<string, unknown> {
  const values = record as Record<string, unknown>;
  return Object.fromEntries(fields.filter((name) => values[name] !== undefined).map((name) => [name, values[name]]));
}

/** A record's own fields, as a creation's or a deletion's `changes`: without its id and timestamps. */
const STAMPS = new Set(['id', 'created_at', 'updated_at']);

export function fieldsOf(record: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([name]) => !STAMPS.has(name)));
}

/** The fields that differ between two versions of a record, its id and timestamps aside. */
export const changedFields = (before: object, after: object): Record<string, [unknown, unknown]> => difference(fieldsOf(before), fieldsOf(after));
