import { FieldErrors, Unprocessable } from './problems.js';

export type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The record's fields from a request body that may or may not wrap it in its root
 * (`{"user": {...}}` or `{...}`; XML always arrives wrapped).
 */
export function unwrapRecord(body: unknown, root: string): Fields {
  if (!isObject(body)) throw new Unprocessable({ base: [`Request body must be an object (${root})`] });
  const keys = Object.keys(body);
  if (keys.length === 1 && keys[0] === root) {
    const inner = body[root];
    if (inner === '' || inner === null) return {};
    if (!isObject(inner)) throw new Unprocessable({ base: [`${root} must be an object`] });
    return inner;
  }
  return body;
}

/** Reads an optional string field, recording an error when it is of another type, holds U+0000 or is too long. */
export function stringField(
  fields: Fields,
  name: string,
  errors: FieldErrors,
  options: { required: boolean; max: number },
): string | undefined {
  const value = fields[name];
  if (value === undefined || value === null) {
    if (options.required) errors.add(name, "can't be blank");
    return undefined;
  }
  if (typeof value !== 'string') {
    errors.add(name, 'must be a string');
    return undefined;
  }
  // PostgreSQL cannot store U+0000, so no field may hold it on any database (docs/limits.md#nul-characters).
  if (value.includes('\u0000')) {
    errors.add(name, 'must not contain the NUL character (U+0000)');
    return undefined;
  }
  if (options.required && value.trim() === '') {
    errors.add(name, "can't be blank");
    return undefined;
  }
  if (value.length > options.max) {
    errors.add(name, `is too long (maximum is ${options.max} characters)`);
    return undefined;
  }
  return value;
}

/** The largest id: an integer column's (PostgreSQL's `integer`). */
export const MAX_ID = 2_147_483_647;

/**
 * Reads an optional list of ids: a JSON array of numbers or digit strings (OnApp clients send both),
 * or XML's `<name type="array"><item>1</item></name>` (an empty element is the empty list).
 */
export function idListField(fields: Fields, name: string, errors: FieldErrors): number[] | undefined {
  let value = fields[name];
  if (value === undefined || value === null) return undefined;
  if (value === '') return [];
  if (isObject(value) && Object.keys(value).length === 1 && 'item' in value) value = [value['item']].flat();
  // No id is past the largest an integer column holds: PostgreSQL refuses to compare with one (a 500).
  const isId = (item: unknown) =>
    ((typeof item === 'number' && Number.isSafeInteger(item) && item > 0) || (typeof item === 'string' && /^[1-9]\d{0,14}$/.test(item))) && Number(item) <= MAX_ID;
  if (!Array.isArray(value) || !value.every(isId)) {
    errors.add(name, 'must be a list of ids');
    return undefined;
  }
  return value.map(Number);
}

/** A flag as JSON (true/false, 1/0) or XML (`true`, `false`, `1`, `0`) sends it; undefined for anything else. */
export function flagOf(value: unknown): boolean | undefined {
  if (value === true || value === 1 || value === 'true' || value === '1') return true;
  if (value === false || value === 0 || value === 'false' || value === '0') return false;
  return undefined;
}

/** A list of strings: a JSON array, a string separated by commas or spaces, or XML's `<item>`s. */
export function stringList(value: unknown): unknown[] | undefined {
  if (typeof value === 'string') return value.split(/[\s,]+/).filter((part) => part !== '');
  if (Array.isArray(value)) return value as unknown[];
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 1 && 'item' in value) return [value.item].flat();
  return undefined;
}
