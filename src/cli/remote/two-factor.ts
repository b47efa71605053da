import type { Command } from 'commander';
import { remote, run } from './command.js';
import type { Connection } from './connection.js';
import { findUser } from './users.js';
import { human, type Output } from '../common/output.js';

const at = (date: Date | null) => (date === null ? '-' : `${date.toISOString().slice(0, 19)}+00:00`);

/** `cmi users two-factor enable|confirm|show|disable` against a server (docs/cli.md#second-factor). */
export function remoteTwoFactorCommands({ client }: Connection) {
  return {
    async enable(target: string): Promise<Output> {
      const user = await findUser(client, target);
      const enrolment = await client.users.twoFactor.enrol(user.id);
      return human(
        `Second factor enrolled for ${user.id} "${user.login}", pending until confirmed (cmi users two-factor confirm ${user.login} CODE). Shown once:`,
        `otpauth URI:    ${enrolment.otpauth_uri}`,
        `secret:         ${enrolment.secret}`,
        'recovery codes:',
        ...enrolment.recovery_codes.map((code) => `  ${code}`),
      );
    },

    async confirm(target: string, code: string): Promise<Output> {
      const user = await findUser(client, target);
      const status = await client.users.twoFactor.confirm(user.id, code);
      return human(`Second factor of ${user.id} "${user.login}" enabled at ${at(status.confirmed_at)} (${status.recovery_codes_left} recovery codes)`);
    },

    async show(target: string): Promise<Output> {
      const user = await findUser(client, target);
      const status = await client.users.twoFactor.show(user.id);
      return human(`enabled:             ${status.enabled}`, `confirmed_at:        ${at(status.confirmed_at)}`, `recovery_codes_left: ${status.recovery_codes_left}`);
    },

    async disable(target: string, code: string | undefined): Promise<Output> {
      const user = await findUser(client, target);
      await client.users.twoFactor.disable(user.id, code);
      return human(`Second factor of ${user.id} "${user.login}" removed`);
    },
  };
}

/** Adds `two-factor` under `cmi users`. */
export function addRemoteTwoFactorCommands(program: Command): void {
  const users = program.commands.find((command) => command.name() === 'users');
  if (users === undefined) throw new Error('addRemoteTwoFactorCommands: cmi users comes first');
  const twoFactor = users.command('two-factor').description('a user\'s TOTP second factor on the server (docs/security.md#second-factor)');
  remote(twoFactor.command('enable <user>'), 'enrol your own second factor: prints the otpauth URI, the secret and 10 recovery codes once', 'cmi users two-factor enable alice')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteTwoFactorCommands(c).enable(target)));
  remote(twoFactor.command('confirm <user> <code>'), 'confirm the pending second factor with a code of the authenticator app', 'cmi users two-factor confirm alice 123456')
    .action(async (target: string, code: string, _options: unknown, command: Command) => run(command, false, (c) => remoteTwoFactorCommands(c).confirm(target, code)));
  remote(twoFactor.command('show <user>'), 'whether the user has a second factor (never its secret)', 'cmi users two-factor show alice')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteTwoFactorCommands(c).show(target)));
  remote(twoFactor.command('disable <user>'), 'remove the second factor: your own with --code (a current code or a recovery code), another user\'s as an administrator', 'cmi users two-factor disable alice --code 123456', 'cmi users two-factor disable bob')
    .option('--code <code>', 'a current code or a recovery code (your own second factor)')
    .action(async (target: string, options: { code?: string }, command: Command) => run(command, false, (c) => remoteTwoFactorCommands(c).disable(target, options.code)));
}
