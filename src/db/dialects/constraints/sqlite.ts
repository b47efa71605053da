import type { Constraints } from './constraints.js';

export const sqliteConstraints: Constraints = {
  /** `UNIQUE constraint failed: users.login` -> `login`. */
  uniqueViolationColumn(error) {
    if (!(error instanceof Error) || (error as { code?: unknown }).code !== 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
    return /UNIQUE constraint failed: \w+\.(\w+)/.exec(error.message)?.[1];
  },
  isForeignKeyViolation(error) {
    return error instanceof Error && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
  },
};
