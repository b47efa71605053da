/** A mistake in how a command was called (a missing or bad option). The message is one line, fit to print. */
export class UsageError extends Error {}
