import { parseDatetime } from '../shared/datetime.js';
import { FieldErrors, Unprocessable } from '../shared/problems.js';
import { idListField, MAX_ID, unwrapRecord } from '../shared/request-body.js';

import { TRIAGE_STATUSES } from './triage.resource.js';

export { TRIAGE_STATUSES };
export type TriageStatus = (typeof TRIAGE_STATUSES)[number];

/** The `triage` sub-resource of an error. */
export interface Triage {
  status: TriageStatus;
  assignee_id: number | null;
  snoozed_until: Date | null;
  snooze_occurrences: number | null;
  resolved_at: Date | null;
  resolved_by_id: number | null;
  regressed_at: Date | null;
  /** Resolved in this release, or in the one after it (docs/api.md#resolved-in-a-release): only a later release's occurrence regresses it. */
  resolved_in_release: string | null;
  updated_at: Date;
}

/** A change asked for: only what the body names (assignee null: unassign). */
export interface TriageChange {
  status?: TriageStatus;
  assignee_id?: number | null;
  snoozed_until?: Date;
  snooze_occurrences?: number;
  /** With status resolved: resolved in this release (`in_release`). */
  in_release?: string;
  /** With status resolved: resolved in the release after the latest the error was seen in (`in_next_release`). */
  in_next_release?: true;
}

export interface ErrorNote {
  id: number;
  error_id: number;
  author_id: number | null;
  body: string;
  created_at: Date;
}

/** The actions of an error's activity (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidactivity). */
export type ActivityAction = 'first_seen' | 'status' | 'assign' | 'note' | 'note_deleted' | 'report' | 'regression';

export interface ActivityEntry {
  id: number;
  at: Date;
  actor_id: number | null;
  action: ActivityAction;
  /** A JSON object, serialized. */
  details: string;
}

/** A note's body, in characters (docs/limits.md). */
export const NOTE_MAX_CHARS = 10_000;
/** The most occurrences a snooze may wait for. */
export const MAX_SNOOZE_OCCURRENCES = 1_000_000_000;
/** The most ids one bulk change names. */
export const MAX_BULK_IDS = 100_000;

type Fields = Record<string, unknown>;
const isObject = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An integer as JSON (a number) or XML (its digits) sends it. */
function integerOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,15}$/.test(value.trim())) return Number(value.trim());
  if (isObject(value) && typeof value['#text'] === 'string') return integerOf(value['#text']);
  return undefined;
}

/** Whether XML said nil (`<assignee_id nil="true"/>`) or JSON said null. */
const isNil = (value: unknown) => value === null || value === '' || (isObject(value) && (value['@_nil'] === 'true' || value['nil'] === 'true'));

const KNOWN_FIELDS = new Set(['status', 'assignee_id', 'snoozed_until', 'snooze_occurrences', 'in_release', 'in_next_release']);
/** A release's name, in characters (as a facet's value: docs/limits.md). */
export const RELEASE_MAX_CHARS = 100;

/**
 * The change a `triage` body asks for (wrapped in `triage` or not), every bad field named in one 422:
 * an unknown status, a snooze with neither a time nor a count, a snooze in the past (at `now`), a
 * snooze's fields without status `snoozed`.
 */
export function parseTriageChange(body: unknown, now: Date): TriageChange {
  const fields = unwrapRecord(body ?? {}, 'triage');
  const errors = new FieldErrors();
  const change: TriageChange = {};
  for (const name of Object.keys(fields)) if (!KNOWN_FIELDS.has(name)) errors.add(name, 'is not a field of triage');
  const status = fields['status'];
  if (status !== undefined) {
    if (typeof status !== 'string' || !(TRIAGE_STATUSES as readonly string[]).includes(status)) errors.add('status', `must be one of ${TRIAGE_STATUSES.join(', ')}`);
    else change.status = status as TriageStatus;
  }
  if ('assignee_id' in fields) {
    const value = fields['assignee_id'];
    if (isNil(value)) change.assignee_id = null;
    else {
      const id = integerOf(value);
      if (id === undefined || id < 1 || id > MAX_ID) errors.add('assignee_id', 'must be the id of a user, or null');
      else change.assignee_id = id;
    }
  }
  const until = fields['snoozed_until'];
  if (until !== undefined && !isNil(until)) {
    const at = typeof until === 'string' ? parseDatetime(until) : undefined;
    if (!at) errors.add('snoozed_until', 'must be a datetime such as 2026-11-20T10:00:00+00:00');
    else if (at.getTime() <= now.getTime()) errors.add('snoozed_until', 'must be in the future');
    else change.snoozed_until = at;
  }
  const occurrences = fields['snooze_occurrences'];
  if (occurrences !== undefined && !isNil(occurrences)) {
    const n = integerOf(occurrences);
    if (n === undefined || n < 1 || n > MAX_SNOOZE_OCCURRENCES) errors.add('snooze_occurrences', `must be an integer from 1 to ${MAX_SNOOZE_OCCURRENCES}`);
    else change.snooze_occurrences = n;
  }
  const snoozing = change.snoozed_until !== undefined || change.snooze_occurrences !== undefined;
  if (change.status === 'snoozed' && !snoozing && !errors.has('snoozed_until') && !errors.has('snooze_occurrences')) {
    errors.add('status', 'snoozed needs snoozed_until or snooze_occurrences');
  }
  if (snoozing && change.status !== 'snoozed' && !errors.has('status')) {
    for (const name of ['snoozed_until', 'snooze_occurrences'] as const) if (change[name] !== undefined) errors.add(name, 'is only given with status snoozed');
  }
  const inRelease = fields['in_release'];
  if (inRelease !== undefined && !isNil(inRelease)) {
    if (typeof inRelease !== 'string' || inRelease.trim() === '' || inRelease.trim().length > RELEASE_MAX_CHARS || inRelease.includes('\u0000')) errors.add('in_release', `must be the name of a release, 1 to ${RELEASE_MAX_CHARS} characters`);
    else change.in_release = inRelease.trim();
  }
  const next = fields['in_next_release'];
  if (next !== undefined && !isNil(next)) {
    if (next === true || next === 'true') change.in_next_release = true;
    else if (next !== false && next !== 'false') errors.add('in_next_release', 'must be true or false');
  }
  for (const name of ['in_release', 'in_next_release'] as const) {
    if (change[name] !== undefined && change.status !== 'resolved' && !errors.has('status')) errors.add(name, 'is only given with status resolved');
  }
  if (change.in_release !== undefined && change.in_next_release) errors.add('in_release', 'is not given with in_next_release');
  if (Object.keys(fields).length === 0) errors.add('base', 'Give status or assignee_id');
  errors.throwIfAny();
  return change;
}

/**
 * A bulk change's body: `{"triage": {...}, "ids": [...]}` (in XML the two inside any root element);
 * `ids` absent: the list's filters in the query string choose the errors.
 */
export function parseBulkTriage(body: unknown, now: Date): { change: TriageChange; ids: number[] | undefined } {
  if (!isObject(body)) throw new Unprocessable({ base: ['Request body must be an object with triage (and ids)'] });
  let fields = body;
  const keys = Object.keys(body);
  if (keys.length === 1 && keys[0] !== 'triage' && keys[0] !== 'ids' && isObject(body[keys[0] as string])) fields = body[keys[0] as string] as Fields;
  const errors = new FieldErrors();
  for (const name of Object.keys(fields)) if (name !== 'triage' && name !== 'ids') errors.add(name, 'is not a field of a bulk change (triage, ids)');
  if (fields['triage'] === undefined) errors.add('triage', "can't be blank");
  // XML names each id's element as it likes (`<ids type="array"><id>3</id></ids>`): its values are the list.
  const given = fields['ids'];
  const listed = isObject(given) && Object.keys(given).length === 1 ? { ids: { item: Object.values(given)[0] } } : fields;
  let ids = idListField(listed, 'ids', errors);
  if (ids !== undefined && ids.length > MAX_BULK_IDS) {
    errors.add('ids', `must name at most ${MAX_BULK_IDS} errors`);
    ids = undefined;
  }
  errors.throwIfAny();
  return { change: parseTriageChange({ triage: fields['triage'] }, now), ids: ids === undefined ? undefined : [...new Set(ids)] };
}

/** A note's body: plain text, 1 to NOTE_MAX_CHARS characters, no NUL. */
export function parseNoteBody(body: unknown): string {
  const fields = unwrapRecord(body ?? {}, 'note');
  const errors = new FieldErrors();
  for (const name of Object.keys(fields)) if (name !== 'body') errors.add(name, 'is not a field of a note');
  const text = fields['body'];
  if (text === undefined || text === null || (typeof text === 'string' && text.trim() === '')) errors.add('body', "can't be blank");
  else if (typeof text !== 'string') errors.add('body', 'must be a string');
  else if (text.includes('\u0000')) errors.add('body', 'must not contain the NUL character (U+0000)');
  else if (text.length > NOTE_MAX_CHARS) errors.add('body', `is too long (maximum is ${NOTE_MAX_CHARS} characters)`);
  errors.throwIfAny();
  return text as string;
}
