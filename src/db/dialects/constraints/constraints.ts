/** Constraint violations, read from the errors each database words its own way. */
export interface Constraints {
  /** The column a unique-constraint violation names; undefined when `error` is something else. */
  uniqueViolationColumn(error: unknown): string | undefined;
}
