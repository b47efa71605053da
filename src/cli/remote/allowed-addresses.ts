import type { Command } from 'commander';
import type { UserWhiteList } from '../../client/index.js';
import { userWhiteListResource } from '../../users/user-white-list.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { idArgument } from './listing.js';
import { rendered } from './records-output.js';
import { findUser } from './users.js';
import { cell, human, table } from '../common/output.js';

const datetime = (value: Date) => `${value.toISOString().slice(0, 19)}+00:00`;


/**
 * `cmi users allow list|add|remove <user>`: a user's allowed addresses on a server
 * (docs/cli.md#allowed-addresses, docs/security.md#allowed-addresses). Registered beside `cmi users` by commands.ts.
 */
export function addRemoteAllowedAddressCommands(program: Command): void {
  const users = program.commands.find((command) => command.name() === 'users');
  if (users === undefined) throw new Error('addRemoteAllowedAddressCommands: cmi users comes first');
  const allow = users.command('allow').description('the addresses a user may be used from (none: anywhere; OnApp\'s user_white_lists)');

  rawOptions(remote(allow.command('list <user>'), 'list the addresses and CIDR ranges a user may be used from', 'cmi users allow list alice', 'cmi users allow list 3 --json'))
    .action(async (target: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, async ({ client }) => {
        const user = await findUser(client, target);
        const all: UserWhiteList[] = [];
        for await (const entry of client.users.whiteLists.all(user.id, { perPage: 1000 })) all.push(entry);
        const raw = rawFormat(options);
        if (raw) return rendered(raw, { resource: userWhiteListResource, records: all });
        const who = `user ${user.id} "${cell(user.login)}"`;
        if (all.length === 0) return human(`No allowed addresses: ${who} may be used from anywhere`);
        const rows = all.map((entry) => [String(entry.id), entry.ip, cell(entry.description, 60), datetime(entry.created_at)]);
        return human(...table([['ID', 'IP', 'DESCRIPTION', 'CREATED'], ...rows]), `${all.length} allowed addresses of ${who}: every other address is refused`);
      }));

  remote(allow.command('add <user> <ip>'), 'allow an address or CIDR range (IPv4 or IPv6); from the first one on, every other address is refused', 'cmi users allow add alice 192.0.2.0/24 --description office')
    .option('--description <text>', 'what the address is (up to 255 characters)', '')
    .action(async (target: string, ip: string, options: { description: string }, command: Command) =>
      run(command, false, async ({ client }) => {
        const user = await findUser(client, target);
        const entry = await client.users.whiteLists.create(user.id, { ip, description: options.description });
        return human(`Allowed ${entry.ip} (entry ${entry.id}) for user ${user.id} "${cell(user.login)}"`);
      }));

  remote(allow.command('remove <user> <entry-id>'), 'remove one of a user\'s allowed addresses by its id (with none left, any address will do)', 'cmi users allow remove alice 7')
    .action(async (target: string, id: string, _options: unknown, command: Command) =>
      run(command, false, async ({ client }) => {
        const number = idArgument(id, 'the entry');
        const user = await findUser(client, target);
        await client.users.whiteLists.delete(user.id, number);
        return human(`Removed allowed address ${number} of user ${user.id} "${cell(user.login)}"`);
      }));
}
