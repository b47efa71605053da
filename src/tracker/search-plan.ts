import { parseDatetime } from '../shared/datetime.js';
import type { ErrorFilters, SearchCondition, SearchTimeColumn } from './infrastructure-error.js';
import { parseSearch, type SearchFilterTerm, SearchSyntaxError, type SearchTerm } from './search-language.js';
import { TRIAGE_STATUSES, type TriageStatus } from './triage.js';

/**
 * What a query of the search language (search-language.ts) asks of the errors list: the list's own
 * filters where a term is one of them (so it keeps their indexes and counts: docs/architecture.md#the-page),
 * every other term as a condition tested by the list's statement (tracker-sql.ts `searched`).
 * docs/search.md is the reference; a term that is not understood is a SearchSyntaxError pointing at it.
 */

/** The keys of the language, besides `tag.<name>`. */
export const SEARCH_KEYS = ['host', 'component', 'class', 'message', 'release', 'environment', 'level', 'status', 'is', 'assigned', 'reported', 'counter', 'first_seen', 'last_seen', 'has'] as const;

/** Keys read from an error's breakdown of its occurrences (host, component) or of their context (the others). */
const SEEN_KEYS = new Set(['host', 'component', 'release', 'environment', 'level']);
const TAG = /^tag\.[a-z0-9_.-]{1,32}$/;
const RELATIVE = /^([+-])(\d{1,6})([smhdw])$/;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MAX_VALUE_CHARS = 255;

export interface SearchContext {
  now: Date;
  /** The signed-in user (`assigned:me`), when there is one. */
  viewerId?: number | null;
}

function refuse(term: SearchTerm, reason: string): never {
  throw new SearchSyntaxError(term.at, reason);
}

function single(term: SearchFilterTerm): string {
  if (term.values.length > 1) refuse(term, `${term.key}: takes one value, not a list`);
  return term.values[0]!;
}

function equalityOnly(term: SearchFilterTerm): void {
  if (term.operator !== '=') refuse(term, `${term.key}: cannot be compared with ${term.operator}`);
}

function timeCondition(term: SearchFilterTerm, column: SearchTimeColumn, now: Date): SearchCondition[] {
  const value = single(term);
  const relative = RELATIVE.exec(value);
  const conditions: SearchCondition[] = [];
  if (relative) {
    if (term.operator !== '=') refuse(term, `${term.key}: a relative time (${value}) takes no ${term.operator}`);
    const at = new Date(now.getTime() - Number(relative[2]) * UNIT_SECONDS[relative[3]!]! * 1000);
    // -1h: within the last hour; +1h: longer ago than an hour.
    conditions.push({ kind: 'time', column, operator: relative[1] === '-' ? '>=' : '<', at });
  } else if (DAY.test(value) && term.operator === '=') {
    const start = parseDatetime(`${value}T00:00:00Z`);
    if (!start) refuse(term, `${term.key}: ${value} is not a date`);
    conditions.push({ kind: 'time', column, operator: '>=', at: start }, { kind: 'time', column, operator: '<', at: new Date(start.getTime() + 86_400_000) });
  } else {
    const at = parseDatetime(DAY.test(value) ? `${value}T00:00:00Z` : value);
    if (!at) refuse(term, `${term.key}: must be a time such as -1h, -7d, 2026-11-01 or 2026-11-01T10:00:00Z, with > < >= <=`);
    if (term.operator === '=') refuse(term, `${term.key}: a time is compared with > < >= <= (or given as a date or as -1h)`);
    conditions.push({ kind: 'time', column, operator: term.operator, at });
  }
  return term.negated ? [{ kind: 'not', conditions }] : conditions;
}

function termConditions(term: SearchFilterTerm, context: SearchContext): SearchCondition[] {
  const { key } = term;
  for (const value of term.values) {
    if (value.length > MAX_VALUE_CHARS) refuse(term, `${key}: a value is at most ${MAX_VALUE_CHARS} characters`);
  }
  if (SEEN_KEYS.has(key) || TAG.test(key)) {
    equalityOnly(term);
    return [{ kind: 'seen', dimension: key, negated: term.negated, values: term.values }];
  }
  switch (key) {
    case 'class':
    case 'message':
      equalityOnly(term);
      return [{ kind: 'column', column: key === 'class' ? 'error_class' : 'message', negated: term.negated, values: term.values }];
    case 'status':
    case 'is': {
      equalityOnly(term);
      const statuses: TriageStatus[] = [];
      const assignment: boolean[] = [];
      for (const value of term.values) {
        if ((TRIAGE_STATUSES as readonly string[]).includes(value)) statuses.push(value as TriageStatus);
        else if (key === 'is' && (value === 'assigned' || value === 'unassigned')) assignment.push(value === 'assigned');
        else refuse(term, `${key}: must be ${key === 'is' ? `one of ${[...TRIAGE_STATUSES, 'assigned', 'unassigned'].join(', ')}` : `one of ${TRIAGE_STATUSES.join(', ')}`}`);
      }
      if (statuses.length > 0 && assignment.length > 0) refuse(term, 'is: a list is of statuses or of assigned/unassigned, not both');
      if (assignment.length > 0) {
        // is:[assigned, unassigned] is every error.
        if (new Set(assignment).size > 1) return term.negated ? [{ kind: 'not', conditions: [] }] : [];
        return [{ kind: 'assigned', negated: term.negated !== assignment[0], ids: [], logins: [], none: true }];
      }
      return [{ kind: 'status', negated: term.negated, statuses }];
    }
    case 'assigned': {
      equalityOnly(term);
      const ids: number[] = [];
      const logins: string[] = [];
      let none = false;
      for (const value of term.values) {
        if (value === 'none') none = true;
        else if (value === 'me') {
          if (typeof context.viewerId !== 'number') refuse(term, 'assigned:me names the signed-in user, and there is none');
          ids.push(context.viewerId);
        } else if (/^[1-9]\d{0,9}$/.test(value)) ids.push(Number(value));
        else logins.push(value.toLowerCase());
      }
      return [{ kind: 'assigned', negated: term.negated, ids, logins, none }];
    }
    case 'reported': {
      equalityOnly(term);
      const value = single(term);
      if (!['true', 'false', 'yes', 'no'].includes(value)) refuse(term, 'reported: must be true or false');
      return [{ kind: 'reported', value: (value === 'true' || value === 'yes') !== term.negated }];
    }
    case 'counter': {
      const value = single(term);
      if (!/^\d{1,15}$/.test(value)) refuse(term, 'counter: must be a whole number, with > < >= <= or none');
      const condition: SearchCondition = { kind: 'counter', operator: term.operator, value: Number(value) };
      return term.negated ? [{ kind: 'not', conditions: [condition] }] : [condition];
    }
    case 'first_seen':
    case 'last_seen':
      return timeCondition(term, key === 'first_seen' ? 'created_at' : 'updated_at', context.now);
    case 'has': {
      equalityOnly(term);
      return term.values.map((value) => {
        if (value === 'assigned' || value === 'assignee') return { kind: 'assigned', negated: !term.negated, ids: [], logins: [], none: true };
        if (!SEEN_KEYS.has(value) && !TAG.test(value)) refuse(term, `has: must be one of ${[...SEEN_KEYS, 'assigned', 'tag.<name>'].join(', ')}`);
        return { kind: 'has', dimension: value, negated: term.negated };
      });
    }
    default:
      return refuse(term, `${key}: is not a key of the search (keys: ${SEARCH_KEYS.join(', ')}, tag.<name>)`);
  }
}

const isPattern = (value: string) => value.includes('*');

/**
 * The filters of `query` added to `filters` (the list's fixed parameters, which keep their meaning).
 * A term that is one of the fixed filters, positive, of one plain value, and not given already,
 * becomes that filter; the free text, joined by spaces, becomes `q`.
 */
export function planSearch(query: string, filters: ErrorFilters, context: SearchContext): ErrorFilters {
  const planned: ErrorFilters = { ...filters };
  delete planned.q;
  const texts: string[] = [];
  const rest: SearchCondition[] = [];
  for (const term of parseSearch(query)) {
    if (term.kind === 'text') {
      if (term.text.length > MAX_VALUE_CHARS) refuse(term, `free text is at most ${MAX_VALUE_CHARS} characters`);
      if (term.text !== '') texts.push(term.text);
      continue;
    }
    for (const condition of termConditions(term, context)) {
      if (condition.kind === 'seen' && (condition.dimension === 'host' || condition.dimension === 'component') && !condition.negated
        && condition.values.length === 1 && !isPattern(condition.values[0]!) && planned[condition.dimension] === undefined) {
        planned[condition.dimension] = condition.values[0];
      } else if (condition.kind === 'column' && condition.column === 'error_class' && !condition.negated && condition.values.length === 1
        && !isPattern(condition.values[0]!) && planned.errorClass === undefined) {
        planned.errorClass = condition.values[0];
      } else if (condition.kind === 'status' && !condition.negated && condition.statuses.length === 1 && planned.status === undefined) {
        planned.status = condition.statuses[0];
      } else if (condition.kind === 'assigned' && !condition.negated && condition.logins.length === 0 && condition.ids.length + (condition.none ? 1 : 0) === 1
        && planned.assignee === undefined) {
        planned.assignee = condition.none ? 'none' : condition.ids[0];
      } else if (condition.kind === 'reported' && planned.reported === undefined) {
        planned.reported = condition.value;
      } else {
        rest.push(condition);
      }
    }
  }
  if (texts.length > 0) planned.q = texts.join(' ');
  if (rest.length > 0) planned.search = [...(filters.search ?? []), ...rest];
  return planned;
}

/** Whether the filters' search compares a time (a kept page of it goes stale as time passes, not only with changes). */
export const searchesByTime = (filters: ErrorFilters): boolean =>
  (filters.search ?? []).some(function relative(condition: SearchCondition): boolean {
    return condition.kind === 'time' || (condition.kind === 'not' && condition.conditions.some(relative));
  });
