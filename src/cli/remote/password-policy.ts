import type { Command } from 'commander';
import type { PasswordPolicy } from '../../client/index.js';
import { passwordPolicyResource } from '../../users/password-policy.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { fieldLines } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { human, type Output } from '../common/output.js';

/** The flags of `set`, as commander gives them (every value a string). */
export interface PasswordPolicyFlags {
  minLength?: string;
  requireUpper?: string;
  requireLower?: string;
  requireDigit?: string;
  requireSymbol?: string;
  history?: string;
  expiryMonths?: string;
  lockoutAttempts?: string;
  lockoutMinutes?: string;
}

const FLAG_FIELDS = [
  ['minLength', 'min_length', 'integer'], ['requireUpper', 'require_upper', 'boolean'], ['requireLower', 'require_lower', 'boolean'],
  ['requireDigit', 'require_digit', 'boolean'], ['requireSymbol', 'require_symbol', 'boolean'], ['history', 'history', 'integer'],
  ['expiryMonths', 'expiry_months', 'integer'], ['lockoutAttempts', 'lockout_attempts', 'integer'], ['lockoutMinutes', 'lockout_minutes', 'integer'],
] as const;

const lines = (policy: PasswordPolicy) => fieldLines(passwordPolicyResource.fields.map(([name]) => [name, String(policy[name])]));

/** `cmi settings password-policy show|set` against a server (docs/cli.md#password-policy). */
export function remotePasswordPolicyCommands({ client }: Connection) {
  return {
    async show(raw: RawFormat): Promise<Output> {
      const policy = await client.passwordPolicy.get();
      if (raw) return rendered(raw, { resource: passwordPolicyResource, record: policy });
      return human(...lines(policy));
    },

    /** Sends the flags given as they are (the server names any bad one); none given is a usage error. */
    async set(flags: PasswordPolicyFlags): Promise<Output> {
      const changes: Record<string, unknown> = {};
      for (const [flag, field, type] of FLAG_FIELDS) {
        const value = flags[flag];
        if (value === undefined) continue;
        changes[field] = type === 'boolean' && (value === 'true' || value === 'false') ? value === 'true' : type === 'integer' && /^\d{1,9}$/.test(value) ? Number(value) : value;
      }
      if (Object.keys(changes).length === 0) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help settings password-policy set)');
      const policy = await client.passwordPolicy.update(changes);
      return human('Password policy saved:', ...lines(policy));
    },
  };
}

type RawFlags = { json?: boolean; xml?: boolean };

/** `cmi settings password-policy show|set`. */
export function addRemotePasswordPolicyCommands(program: Command): void {
  const settings = program.command('settings').description('installation settings kept on a server');
  const policy = settings.command('password-policy').description('the password policy every new password is held to (holders of password_policy.manage)');
  rawOptions(remote(policy.command('show'), 'print the password policy', 'cmi settings password-policy show', 'cmi settings password-policy show --json'))
    .action(async (options: RawFlags, command: Command) => run(command, options.xml, (c) => remotePasswordPolicyCommands(c).show(rawFormat(options))));
  remote(policy.command('set'), 'change the password policy: only the options given', 'cmi settings password-policy set --min-length 12 --require-digit true --history 5')
    .option('--min-length <n>', 'characters a new password has at least (8-128)')
    .option('--require-upper <true|false>', 'a new password holds an upper-case letter')
    .option('--require-lower <true|false>', 'a new password holds a lower-case letter')
    .option('--require-digit <true|false>', 'a new password holds a digit')
    .option('--require-symbol <true|false>', 'a new password holds a character that is neither a letter nor a digit')
    .option('--history <n>', 'how many of the last passwords a new one may not repeat (0-24)')
    .option('--expiry-months <n>', 'months after which a password signs in only to change itself (0: never)')
    .option('--lockout-attempts <n>', 'failed logins allowed for one login from one address in the window')
    .option('--lockout-minutes <n>', 'the failed-login window, in minutes')
    .action(async (options: PasswordPolicyFlags, command: Command) => run(command, false, (c) => remotePasswordPolicyCommands(c).set(options)));
}
