import cluster from 'node:cluster';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { ClientError } from '../shared/problems.js';
import { connectionOptions } from './remote/connection-options.js';
import { addServeCommand } from './serve.js';
import { Refusal, Reported, UsageError } from './common/usage-error.js';
import { connectionFailureLine, connectionFailureOf } from '../db/dialects/connection/connection-failure.js';
import { complain, writeText } from './common/output.js';
import { cmiReleaseVersion } from '../version/version.js';

// Positional options: the program's --url/--user/... go before the command; remote commands take them after too
// (docs/cli.md#connecting).
const program = connectionOptions(new Command('cmi').description('Cloud-management API server, and a command line for it (docs/cli.md)').showHelpAfterError().enablePositionalOptions());
// Help and commander's own errors go through the one writer too (common/output.ts); every command added below inherits this.
program.configureOutput({ writeOut: (text) => writeText('stdout', text), writeErr: (text) => writeText('stderr', text) });
// Commander's usage errors (an unknown command or option, a missing argument, a bad choice) are thrown
// rather than exiting 1, and exit 2 below, as every usage mistake does (docs/cli.md#exit-codes).
program.exitOverride();
program.version(`cmi ${cmiReleaseVersion()}`, '-V, --version', 'print cmi\'s version (cmi version asks a server for its API version)');

addServeCommand(program);
// `cmi serve` uses none of the other commands: they (the remote client, CSV and XML readers, backup,
// doctor) are loaded only for another command, so a server starts with less to load and to hold
// (docs/benchmarks.md#start).
if (process.argv[2] !== 'serve') (await import('./commands.js')).addOtherCommands(program);

try {
  await program.parseAsync();
} catch (error) {
  // The remote client is loaded only now (command.ts): `cmi serve` never loads it.
  const remote = (await import('./remote/command.js')).remoteFailure(error);
  if (error instanceof CommanderError) {
    // Commander has printed its message (or the help asked for, exit 0).
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else if (remote !== undefined) {
    complain(...remote.lines);
    process.exitCode = remote.code;
  } else if (error instanceof Reported) {
    process.exitCode = error.exitCode;
  } else if (connectionFailureOf(error) !== undefined) {
    // Where the database is, why it cannot be reached and what to check, never its password (docs/operations.md#when-the-database-cannot-be-reached).
    complain(`cmi: ${connectionFailureLine(connectionFailureOf(error)!)}`);
  } else if (error instanceof ConfigError || error instanceof UsageError || error instanceof Refusal) {
    complain(`cmi: ${error.message}`);
    if (!(error instanceof ConfigError)) process.exitCode = error.exitCode;
  } else if (error instanceof ClientError) {
    complain(...Object.entries(error.messages).flatMap(([field, messages]) => messages.map((message) => `cmi: ${field === 'base' ? '' : `${field} `}${message}`)));
  } else {
    complain(`cmi: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!(error instanceof CommanderError)) process.exitCode ||= 1;
  // A worker's IPC channel would keep it alive; its primary learns of the failure from the exit.
  if (cluster.isWorker) process.exit(1);
}
