import cluster from 'node:cluster';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { ClientError } from '../shared/problems.js';
import { addBackupCommands } from './backup.js';
import { addHelpCommand } from './help.js';
import { addLocalDeliveryCommands } from './local/deliveries.js';
import { addLocalErrorCommands } from './local/errors.js';
import { addLocalUserCommands } from './local/users.js';
import { addMigrateCommand } from './migrate.js';
import { addDoctorCommand } from './ops/doctor.js';
import { addOldSpellings } from './old-spellings.js';
import { connectionOptions, remoteFailure } from './remote/command.js';
import { addRemoteBucketCommands } from './remote/buckets.js';
import { addRemoteApiKeyCommands } from './remote/api-keys.js';
import { addRemoteDeliveryCommands } from './remote/deliveries.js';
import { addRemoteAuditCommands } from './remote/audit.js';
import { addRemoteErrorCommands } from './remote/errors.js';
import { addRemoteIngestKeyCommands } from './remote/ingest-keys.js';
import { addRemoteAlertCommands } from './remote/alerts.js';
import { addLoginCommands } from './remote/login.js';
import { addRemoteRoleCommands } from './remote/roles.js';
import { addRemoteUserCommands } from './remote/users.js';
import { addRemoteGroupCommands } from './remote/groups.js';
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
addMigrateCommand(program);
addBackupCommands(program);
addDoctorCommand(program);
// `cmi local ...`: the configured database (docs/cli.md#local-or-remote).
const local = program.command('local').description('act on the configured database directly, as the operator (also without working credentials)');
addLocalUserCommands(local);
addLocalErrorCommands(local);
addLocalDeliveryCommands(local);
// `cmi users|errors|deliveries ...`, `cmi version`, `cmi login`: a server.
addRemoteUserCommands(program);
addRemoteGroupCommands(program);
addRemoteApiKeyCommands(program);
addRemoteErrorCommands(program);
addRemoteDeliveryCommands(program);
addRemoteRoleCommands(program);
addRemoteBucketCommands(program);
addRemoteIngestKeyCommands(program);
addRemoteAuditCommands(program);
addRemoteAlertCommands(program);
addLoginCommands(program);
addOldSpellings(program);
addHelpCommand(program);

try {
  await program.parseAsync();
} catch (error) {
  const remote = remoteFailure(error);
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
