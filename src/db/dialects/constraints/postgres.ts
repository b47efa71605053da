import type { Constraints } from './constraints.js';

export const postgresConstraints: Constraints = {
  /** Code 23505 with the detail `Key (login)=(bob) already exists.` -> `login` (of several columns: `user_id, name`). */
  uniqueViolationColumn(error) {
    if (!(error instanceof Error) || (error as { code?: unknown }).code !== '23505') return undefined;
    return /^Key \((\w+(?:, \w+)*)\)/.exec(String((error as { detail?: unknown }).detail))?.[1];
  },
  /** Code 23503. */
  isForeignKeyViolation(error) {
    return error instanceof Error && (error as { code?: unknown }).code === '23503';
  },
};
