import type { FieldErrors } from './problems.js';

/** A parsed query string: each parameter once, or several times as an array. */
export type Query = Readonly<Record<string, string | string[] | undefined>>;

/** One value of a parameter; given twice is a mistake, named in the 422. */
export function singleParameter(query: Query, name: string, errors: FieldErrors): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) {
    if (value.length === 1) return value[0];
    errors.add(name, 'must be given only once');
    return undefined;
  }
  return value;
}

/** An id parameter (1 to 2147483647, the ids' column range), or a 422 naming it. */
export function idParameter(query: Query, name: string, errors: FieldErrors): number | undefined {
  const value = singleParameter(query, name, errors);
  if (value === undefined) return undefined;
  if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
    errors.add(name, 'must be an id');
    return undefined;
  }
  return Number(value);
}
