import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { ClientError } from '../shared/problems.js';
import { connectionOptions } from './remote/connection-options.js';
import { addServeCommand } from './serve.js';
import { Refusal, Reported, UsageError } from './common/usage-error.js';
import { connectionFailureLine, connectionFailureOf } from '../db/dialects/connection/connection-failure.js';
import { commanderOutput, complain } from './common/output.js';
import { chosenExitCode, type CliIo, inRun } from './common/io.js';
import { cmiReleaseVersion } from '../version/version.js';

/** A new `cmi` program, with every command `argv` may name. */
async function program(argv: readonly string[]): Promise<Command> {
  // Positional options: the program's --url/--user/... go before the command; remote commands take them after too
  // (docs/cli.md#connecting).
  const program = connectionOptions(new Command('cmi').description('Cloud-management API server, and a command line for it (docs/cli.md)').showHelpAfterError().enablePositionalOptions());
  // Help and commander's own errors go through the one writer too (common/output.ts); every command added below inherits this.
  program.configureOutput(commanderOutput());
  // Commander's usage errors (an unknown command or option, a missing argument, a bad choice) are thrown
  // rather than exiting 1, and exit 2 below, as every usage mistake does (docs/cli.md#exit-codes).
  program.exitOverride();
  program.version(`cmi ${cmiReleaseVersion()}`, '-V, --version', 'print cmi\'s version (cmi version asks a server for its API version)');

  addServeCommand(program);
  // `cmi serve` uses none of the other commands: they (the remote client, CSV and XML readers, backup,
  // doctor) are loaded only for another command, so a server starts with less to load and to hold
  // (docs/benchmarks.md#start).
  if (argv[0] !== 'serve') (await import('./commands.js')).addOtherCommands(program);
  return program;
}

/** The exit code for a command that threw `error`, having said why on stderr; `chosen` is one it chose before. */
async function failure(error: unknown, chosen: number | undefined): Promise<number> {
  // The remote client is loaded only now (command.ts): `cmi serve` never loads it.
  const remote = (await import('./remote/command.js')).remoteFailure(error);
  let code = chosen;
  if (error instanceof CommanderError) {
    // Commander has printed its message (or the help asked for, exit 0).
    return error.exitCode === 0 ? 0 : 2;
  } else if (remote !== undefined) {
    complain(...remote.lines);
    code = remote.code;
  } else if (error instanceof Reported) {
    code = error.exitCode;
  } else if (connectionFailureOf(error) !== undefined) {
    // Where the database is, why it cannot be reached and what to check, never its password (docs/operations.md#when-the-database-cannot-be-reached).
    complain(`cmi: ${connectionFailureLine(connectionFailureOf(error)!)}`);
  } else if (error instanceof ConfigError || error instanceof UsageError || error instanceof Refusal) {
    complain(`cmi: ${error.message}`);
    if (!(error instanceof ConfigError)) code = error.exitCode;
  } else if (error instanceof ClientError) {
    complain(...Object.entries(error.messages).flatMap(([field, messages]) => messages.map((message) => `cmi: ${field === 'base' ? '' : `${field} `}${message}`)));
  } else {
    complain(`cmi: ${error instanceof Error ? error.message : String(error)}`);
  }
  return code || 1;
}

/** How a run ended: its exit code, and whether a command failed (threw) rather than ending with a code it chose. */
export interface Ended {
  code: number;
  failed: boolean;
}

/**
 * Runs `cmi <argv>` on `io` (its environment, working directory, input and output) and resolves to how it
 * ended; it changes neither process.env nor process.exitCode, so runs in one process never see each other
 * (docs/cli.md#running-in-process). main.ts runs the real command on the process's own I/O; tests run
 * commands in their own process (test/support/cli.ts).
 */
export function runCliEnded(argv: readonly string[], io: CliIo): Promise<Ended> {
  return inRun(io, async (): Promise<Ended> => {
    try {
      await (await program(argv)).parseAsync([...argv], { from: 'user' });
      return { code: chosenExitCode() ?? 0, failed: false };
    } catch (error) {
      return { code: await failure(error, chosenExitCode()), failed: true };
    }
  });
}

/** Runs `cmi <argv>` on `io` (see runCliEnded) and resolves to its exit code. */
export const runCli = async (argv: readonly string[], io: CliIo): Promise<number> => (await runCliEnded(argv, io)).code;
