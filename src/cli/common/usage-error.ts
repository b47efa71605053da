/** A mistake in how a command was called (a missing or bad option): exit 2 (docs/cli.md#exit-codes). The message is one line, fit to print. */
export class UsageError extends Error {
  readonly exitCode: number = 2;
}

/** A local command refused: what it was asked for is not there (an error or delivery id). Exit 1, one line. */
export class Refusal extends Error {
  readonly exitCode: number = 1;
}

/** A failure the command has printed already, in its own format (a start-up line of `cmi serve`): exit 1, nothing more. */
export class Reported extends Error {
  readonly exitCode: number = 1;
}
