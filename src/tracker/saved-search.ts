import { FieldErrors } from '../shared/problems.js';
import { type Fields, flagOf, stringField, unwrapRecord } from '../shared/request-body.js';
import { SEARCH_LIMITS, SearchSyntaxError } from './search-language.js';
import { planSearch, type SearchContext } from './search-plan.js';

/** A user's named search in the search language (docs/search.md#saved-searches). */
export interface SavedSearch {
  id: number;
  name: string;
  query: string;
  /** Seen by everyone who may read errors; else by its owner only. */
  shared: boolean;
  user_id: number;
  created_at: Date;
  updated_at: Date;
}

export type SavedSearchFields = Partial<Pick<SavedSearch, 'name' | 'query' | 'shared'>>;

/** A saved search's name, in characters. */
export const SAVED_SEARCH_NAME_MAX_CHARS = 100;
const FIELDS = new Set(['name', 'query', 'shared']);

/**
 * The fields of a `saved_search` body (wrapped or not, JSON or XML), every bad one named in one 422; a
 * new one needs `name` and `query`. The query must be one the list runs (its refusal, with the
 * position, is the field's message).
 */
export function parseSavedSearchBody(body: unknown, { creating, context }: { creating: boolean; context: SearchContext }): SavedSearchFields {
  const fields: Fields = unwrapRecord(body ?? {}, 'saved_search');
  const errors = new FieldErrors();
  for (const name of Object.keys(fields)) if (!FIELDS.has(name)) errors.add(name, 'is not a field of a saved search');
  const parsed: SavedSearchFields = {};
  const name = stringField(fields, 'name', errors, { required: creating, max: SAVED_SEARCH_NAME_MAX_CHARS });
  if (name !== undefined) {
    if (name.trim() === '') errors.add('name', "can't be blank");
    else parsed.name = name.trim();
  }
  const query = stringField(fields, 'query', errors, { required: creating, max: SEARCH_LIMITS.queryChars });
  if (query !== undefined) {
    if (query.trim() === '') errors.add('query', "can't be blank");
    else {
      try {
        planSearch(query, {}, context);
        parsed.query = query.trim();
      } catch (error) {
        if (!(error instanceof SearchSyntaxError)) throw error;
        errors.add('query', error.message);
      }
    }
  }
  if (fields['shared'] !== undefined && fields['shared'] !== null) {
    const shared = flagOf(fields['shared']);
    if (shared === undefined) errors.add('shared', 'must be true or false');
    else parsed.shared = shared;
  }
  if (!creating && Object.keys(fields).length === 0) errors.add('base', 'Give name, query or shared');
  errors.throwIfAny();
  return parsed;
}
