import type { Command } from 'commander';
import { addBackupCommands } from './backup.js';
import { addHelpCommand } from './help.js';
import { addLocalDeliveryCommands } from './local/deliveries.js';
import { addLocalErrorCommands } from './local/errors.js';
import { addLocalUserCommands } from './local/users.js';
import { addMigrateCommand } from './migrate.js';
import { addDoctorCommand } from './ops/doctor.js';
import { addOldSpellings } from './old-spellings.js';
import { addRemoteBucketCommands } from './remote/buckets.js';
import { addRemoteLogRuleCommands } from './remote/log-rules.js';
import { addRemoteReleaseCommands } from './remote/releases.js';
import { addRemoteSavedSearchCommands } from './remote/saved-searches.js';
import { addRemoteApiKeyCommands } from './remote/api-keys.js';
import { addRemoteAllowedAddressCommands } from './remote/allowed-addresses.js';
import { addRemoteAccountSecurityCommands } from './remote/account-security.js';
import { addRemoteDeliveryCommands } from './remote/deliveries.js';
import { addRemoteAuditCommands } from './remote/audit.js';
import { addRemoteErrorCommands } from './remote/errors.js';
import { addRemoteIngestKeyCommands } from './remote/ingest-keys.js';
import { addRemoteSourceCommands } from './remote/sources.js';
import { addRemoteIdentityProviderCommands } from './remote/identity-providers.js';
import { addRemoteAlertCommands } from './remote/alerts.js';
import { addLoginCommands } from './remote/login.js';
import { addRemoteRoleCommands } from './remote/roles.js';
import { addRemoteUserCommands } from './remote/users.js';
import { addRemoteTwoFactorCommands } from './remote/two-factor.js';
import { addRemoteYubiKeyCommands } from './remote/yubi-keys.js';
import { addRemoteGroupCommands } from './remote/groups.js';
import { addRemotePasswordPolicyCommands } from './remote/password-policy.js';

/** Every command but `cmi serve` (main.ts adds that one first, and these for any other command). */
export function addOtherCommands(program: Command): void {
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
  addRemoteAllowedAddressCommands(program);
  addRemoteTwoFactorCommands(program);
  addRemoteYubiKeyCommands(program);
  addRemoteAccountSecurityCommands(program);
  addRemoteErrorCommands(program);
  addRemoteDeliveryCommands(program);
  addRemoteRoleCommands(program);
  addRemoteBucketCommands(program);
  addRemoteIngestKeyCommands(program);
  addRemoteSourceCommands(program);
  addRemoteLogRuleCommands(program);
  addRemoteReleaseCommands(program);
  addRemoteSavedSearchCommands(program);
  addRemotePasswordPolicyCommands(program);
  addRemoteAuditCommands(program);
  addRemoteAlertCommands(program);
  addRemoteIdentityProviderCommands(program);
  addLoginCommands(program);
  addOldSpellings(program);
  addHelpCommand(program);
}
