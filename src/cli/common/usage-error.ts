/** A mistake in how a command was called (a missing or bad option): exit 2 (docs/cli.md#exit-codes). The message is one line, fit to print. */
export class UsageError extends Error {
  readonly exitCode: number = 2;
}

/** A local command refused: what it was asked for is not there (an error or delivery id). Exit 1, one line. */
export class Refusal extends Error {
  readonly exitCode: number = 1;
}
