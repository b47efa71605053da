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
