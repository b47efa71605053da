import type { Command } from 'commander';
import type { YubiKey } from '../../client/index.js';
import { yubiKeyResource } from '../../users/yubi-key.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { idArgument } from './listing.js';
import { rendered } from './records-output.js';
import { findUser } from './users.js';
import { cell, human, table } from '../common/output.js';

const datetime = (value: Date) => `${value.toISOString().slice(0, 19)}+00:00`;

/**
 * `cmi users yubi-keys list|add|remove <user>`: a user's YubiKeys on a server, OnApp's `yubi_keys`
 * (docs/cli.md#yubikeys, docs/security.md#yubikeys). Registered beside `cmi users` by commands.ts.
 */
export function addRemoteYubiKeyCommands(program: Command): void {
  const users = program.commands.find((command) => command.name() === 'users');
  if (users === undefined) throw new Error('addRemoteYubiKeyCommands: cmi users comes first');
  const keys = users.command('yubi-keys').description('a user\'s YubiKeys (OnApp\'s yubi_keys; recorded by their public id, never a factor in cmi)');

  rawOptions(remote(keys.command('list <user>'), 'list a user\'s YubiKeys: each one\'s public id and label', 'cmi users yubi-keys list alice', 'cmi users yubi-keys list 3 --json'))
    .action(async (target: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, async ({ client }) => {
        const user = await findUser(client, target);
        const all: YubiKey[] = [];
        for await (const key of client.users.yubiKeys.all(user.id, { perPage: 1000 })) all.push(key);
        const raw = rawFormat(options);
        if (raw) return rendered(raw, { resource: yubiKeyResource, records: all });
        const who = `user ${user.id} "${cell(user.login)}"`;
        if (all.length === 0) return human(`No YubiKeys recorded for ${who}`);
        const rows = all.map((key) => [String(key.id), key.otp, cell(key.label, 60), datetime(key.created_at)]);
        return human(...table([['ID', 'PUBLIC ID', 'LABEL', 'CREATED'], ...rows]), `${all.length} YubiKeys of ${who}`);
      }));

  remote(keys.command('add <user> <otp>'), 'record a YubiKey from an OTP it typed (touch the key in the argument\'s place); only its public id is kept', 'cmi users yubi-keys add alice cccjgjgkhcbbirdrfdnlnghhfgrtnnlgedjlftrbdeut --label "desk key"')
    .option('--label <text>', 'what the key is (up to 255 characters)', '')
    .action(async (target: string, otp: string, options: { label: string }, command: Command) =>
      run(command, false, async ({ client }) => {
        const user = await findUser(client, target);
        const key = await client.users.yubiKeys.create(user.id, { otp, label: options.label });
        return human(`Recorded YubiKey ${key.otp} (key ${key.id}) for user ${user.id} "${cell(user.login)}"`);
      }));

  remote(keys.command('remove <user> <key-id>'), 'forget one of a user\'s YubiKeys by its id', 'cmi users yubi-keys remove alice 4')
    .action(async (target: string, id: string, _options: unknown, command: Command) =>
      run(command, false, async ({ client }) => {
        const number = idArgument(id, 'the key');
        const user = await findUser(client, target);
        await client.users.yubiKeys.delete(user.id, number);
        return human(`Forgot YubiKey ${number} of user ${user.id} "${cell(user.login)}"`);
      }));
}
