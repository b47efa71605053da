import { parseDatetime } from '../shared/datetime.js';
import { FieldErrors } from '../shared/problems.js';
import { type Query, singleParameter } from '../shared/query-string.js';
import { MAX_ID } from '../shared/request-body.js';
import { errorReportLimits } from '../shared/limits.js';
import type { Direction, ErrorFilters, ErrorSort } from './infrastructure-error.js';
import { SEARCH_LIMITS, SearchSyntaxError } from './search-language.js';
import { planSearch, type SearchContext } from './search-plan.js';
import { TRIAGE_STATUSES } from './triage.js';

/** Every parameter a list (or a bulk delete, with `all`) understands. */
const KNOWN = new Set(['page', 'per_page', 'sort', 'direction', 'reported', 'error_class', 'q', 'since', 'until', 'host', 'component', 'status', 'assignee', 'release', 'environment']);
const SORTS: readonly ErrorSort[] = ['updated_at', 'created_at', 'counter'];
const DIRECTIONS: readonly Direction[] = ['asc', 'desc'];

export interface ErrorListQuery {
  filters: ErrorFilters;
  sort: ErrorSort;
  direction: Direction;
}

function text(query: Query, name: string, errors: FieldErrors): string | undefined {
  const value = singleParameter(query, name, errors);
  if (value === undefined) return undefined;
  if (value.includes('\u0000')) {
    errors.add(name, 'must not contain the NUL character (U+0000)');
    return undefined;
  }
  if (value === '' || value.length > errorReportLimits.nameChars) {
    errors.add(name, `must be 1 to ${errorReportLimits.nameChars} characters`);
    return undefined;
  }
  return value;
}

function datetime(query: Query, name: string, errors: FieldErrors): Date | undefined {
  const value = singleParameter(query, name, errors);
  if (value === undefined) return undefined;
  const at = parseDatetime(value);
  if (!at) errors.add(name, 'must be a datetime such as 2026-11-20T10:00:00+00:00');
  return at;
}

function oneOf<T extends string>(query: Query, name: string, allowed: readonly T[], errors: FieldErrors): T | undefined {
  const value = singleParameter(query, name, errors);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    errors.add(name, `must be one of ${allowed.join(', ')}`);
    return undefined;
  }
  return value as T;
}

/** One parameter that must be one of `allowed` (`fallback` when absent); anything else is a 422 naming it. */
export function parseChoice<T extends string>(query: Query, name: string, allowed: readonly T[], fallback: T): T {
  const errors = new FieldErrors();
  const value = oneOf(query, name, allowed, errors);
  errors.throwIfAny();
  return value ?? fallback;
}

/** `assignee=me|none|<id>`: `me` is the viewer (`viewerId`; the operator at the command line is no user). */
function assignee(query: Query, viewerId: number | null | undefined, errors: FieldErrors): number | 'none' | undefined {
  const value = singleParameter(query, 'assignee', errors);
  if (value === undefined) return undefined;
  if (value === 'none') return 'none';
  if (value === 'me') {
    if (typeof viewerId === 'number') return viewerId;
    errors.add('assignee', 'me names the signed-in user, and there is none');
    return undefined;
  }
  if (/^[1-9]\d{0,14}$/.test(value) && Number(value) <= MAX_ID) return Number(value);
  errors.add('assignee', 'must be me, none or the id of a user');
  return undefined;
}

/** `q`, the search language (docs/search.md), planned onto the fixed filters; a refusal names the position. */
function search(query: Query, filters: ErrorFilters, context: SearchContext, errors: FieldErrors): ErrorFilters {
  const q = singleParameter(query, 'q', errors);
  if (q === undefined) return filters;
  if (q === '') {
    errors.add('q', `must be 1 to ${SEARCH_LIMITS.queryChars} characters`);
    return filters;
  }
  try {
    return planSearch(q, filters, context);
  } catch (error) {
    if (!(error instanceof SearchSyntaxError)) throw error;
    errors.add('q', error.message);
    return filters;
  }
}

/**
 * The filters and order of an errors list (docs/api.md#get-sysadmin_toolsinfrastructureerrors). A value that is not understood
 * is a 422 naming the parameter, never ignored.
 */
export function parseErrorListQuery(query: Query, { deletion = false, viewerId = undefined as number | null | undefined, now = new Date() } = {}): ErrorListQuery {
  const errors = new FieldErrors();
  // A misspelt filter is refused, never ignored: ignored, it would widen a list, or a bulk delete.
  for (const name of Object.keys(query)) {
    if (name !== '' && !KNOWN.has(name) && !(deletion && name === 'all')) errors.add(name, 'is not a parameter of this list');
  }
  const reported = oneOf(query, 'reported', ['true', 'false'], errors);
  const filters: ErrorFilters = {
    reported: reported === undefined ? undefined : reported === 'true',
    errorClass: text(query, 'error_class', errors),
    since: datetime(query, 'since', errors),
    until: datetime(query, 'until', errors),
    host: text(query, 'host', errors),
    component: text(query, 'component', errors),
    status: oneOf(query, 'status', TRIAGE_STATUSES, errors),
    assignee: assignee(query, viewerId, errors),
  };
  // release= and environment= are the terms release:VALUE and environment:VALUE (a * in them a wildcard).
  const seen = (['release', 'environment'] as const).flatMap((dimension) => {
    const value = text(query, dimension, errors);
    return value === undefined ? [] : [{ kind: 'seen' as const, dimension, negated: false, values: [value] }];
  });
  if (seen.length > 0) filters.search = seen;
  const searched = search(query, filters, { now, viewerId }, errors);
  const sort = oneOf(query, 'sort', SORTS, errors) ?? 'updated_at';
  const direction = oneOf(query, 'direction', DIRECTIONS, errors) ?? 'desc';
  errors.throwIfAny();
  for (const key of Object.keys(searched) as Array<keyof ErrorFilters>) if (searched[key] === undefined) delete searched[key];
  return { filters: searched, sort, direction };
}

/** Whether the query names any filter at all (a bulk delete without one needs `all=true`). */
export function hasFilter(filters: ErrorFilters): boolean {
  return Object.keys(filters).length > 0;
}
