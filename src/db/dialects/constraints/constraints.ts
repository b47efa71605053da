/** Constraint violations, read from the errors each database words its own way. */
export interface Constraints {
  /** The column a unique-constraint violation names; undefined when `error` is something else. */
  uniqueViolationColumn(error: unknown): string | undefined;
  /** Whether `error` is a foreign-key violation: a row refers to one another transaction just removed, or still refers to one being removed. */
  isForeignKeyViolation(error: unknown): boolean;
}
