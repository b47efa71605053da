import { parseDatetime } from '../shared/datetime.js';
import { changeLimits } from '../shared/limits.js';
import { FieldErrors } from '../shared/problems.js';
import { type Fields, stringField, stringList, unwrapRecord } from '../shared/request-body.js';

/** A change to the cloud as cmi keeps and serves it (wire names, docs/changes.md). */
export interface Change {
  id: number;
  kind: string;
  title: string;
  release: string | null;
  started_at: Date;
  /** Null while the change runs. */
  ended_at: Date | null;
  /** The hosts and components it touched; the empty list means all of them. */
  hosts: string[];
  components: string[];
  /** The id of the user who recorded it; null for the operator at the command line. */
  created_by: number | null;
}

/** What a change's create and edit set. */
export type ChangeFields = Omit<Change, 'id' | 'created_by'>;

/** Where an error occurred: the hosts and components its reports named (the tracker's breakdown). */
export interface ErrorPlaces {
  hosts: ReadonlySet<string>;
  components: ReadonlySet<string>;
}

/** How long before an error's first occurrence a change that ended is still suspected (docs/changes.md#suspect-changes). */
export const SUSPECT_WINDOW_MS = 60 * 60_000;

const KIND = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Whether an error that occurred at `places` is in the change's scope: on one of its hosts and in one of its components (an empty list matches all). */
export function inScope(change: Pick<Change, 'hosts' | 'components'>, places: ErrorPlaces): boolean {
  const matches = (list: readonly string[], seen: ReadonlySet<string>) => list.length === 0 || list.some((item) => seen.has(item));
  return matches(change.hosts, places.hosts) && matches(change.components, places.components);
}

function datetimeField(fields: Fields, name: string, errors: FieldErrors, nullable: boolean): Date | null | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (value === null || value === '') {
    if (nullable) return null;
    errors.add(name, 'must be a datetime such as 2026-11-20T10:00:00+00:00');
    return undefined;
  }
  const at = typeof value === 'string' ? parseDatetime(value) : undefined;
  if (at === undefined) errors.add(name, 'must be a datetime such as 2026-11-20T10:00:00+00:00');
  return at;
}

function scopeField(fields: Fields, name: 'hosts' | 'components', errors: FieldErrors): string[] | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (value === null || value === '') return [];
  const list = stringList(value);
  const { scopeItemChars, scopeItems } = changeLimits;
  if (list === undefined || !list.every((item) => typeof item === 'string' && item.trim() !== '' && !item.includes('\u0000'))) {
    errors.add(name, 'must be a list of names (an empty list means all)');
    return undefined;
  }
  const names = [...new Set((list as string[]).map((item) => item.trim()))];
  if (names.some((item) => item.length > scopeItemChars)) errors.add(name, `must hold names of at most ${scopeItemChars} characters`);
  else if (names.length > scopeItems) errors.add(name, `must hold at most ${scopeItems} names`);
  else return names;
  return undefined;
}

/**
 * Reads a change's create (`current` undefined) or edit body, wrapped in `change` or not, naming every
 * bad field in one 422 (docs/limits.md#changes). A new change starts `now` unless it says when.
 */
export function readChange(body: unknown, current: ChangeFields | undefined, now: Date): ChangeFields {
  const fields = unwrapRecord(body ?? {}, 'change');
  const errors = new FieldErrors();
  const out: ChangeFields = current
    ? { ...current }
    : { kind: '', title: '', release: null, started_at: now, ended_at: null, hosts: [], components: [] };
  const creating = current === undefined;
  const kind = stringField(fields, 'kind', errors, { required: creating, max: changeLimits.kindChars });
  if (kind !== undefined) {
    if (!KIND.test(kind.trim())) errors.add('kind', 'must be one word (letters, digits, "_", "-", "."), such as deploy, upgrade, maintenance or config');
    else out.kind = kind.trim();
  }
  const title = stringField(fields, 'title', errors, { required: creating, max: changeLimits.titleChars });
  if (title !== undefined) {
    if (title.trim() === '') errors.add('title', "can't be blank");
    else out.title = title.trim();
  }
  if (fields['release'] === null || fields['release'] === '') out.release = null;
  else {
    const release = stringField(fields, 'release', errors, { required: false, max: changeLimits.releaseChars });
    if (release !== undefined) out.release = release.trim() === '' ? null : release.trim();
  }
  const started = datetimeField(fields, 'started_at', errors, false);
  if (started) out.started_at = started;
  const ended = datetimeField(fields, 'ended_at', errors, true);
  if (ended !== undefined) out.ended_at = ended;
  for (const name of ['hosts', 'components'] as const) {
    const list = scopeField(fields, name, errors);
    if (list !== undefined) out[name] = list;
  }
  if (!errors.has('ended_at') && !errors.has('started_at') && out.ended_at !== null && out.ended_at.getTime() < out.started_at.getTime()) {
    errors.add('ended_at', 'must not be before started_at');
  }
  errors.throwIfAny();
  return out;
}
