import type { Command } from 'commander';
import type { UserApiKey } from '../../client/index.js';
import { userApiKeyResource } from '../../users/user-api-key.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { idArgument } from './listing.js';
import { rendered } from './records-output.js';
import { findUser } from './users.js';
import { cell, human, table } from '../common/output.js';

const datetime = (value: Date | null) => (value === null ? '-' : `${value.toISOString().slice(0, 19)}+00:00`);


/**
 * `cmi users api-keys ls|add|revoke <user>`: a user's named API keys on a server
 * (docs/cli.md#api-keys). Registered beside `cmi users` by main.ts.
 */
export function addRemoteApiKeyCommands(program: Command): void {
  const users = program.commands.find((command) => command.name() === 'users');
  if (users === undefined) throw new Error('addRemoteApiKeyCommands: cmi users comes first');
  const keys = users.command('api-keys').description('a user\'s named API keys on the server (cmi users api-key: its default key anew)');

  rawOptions(remote(keys.command('ls <user>'), 'list a user\'s API keys (never a key): id, description, when made and last used', 'cmi users api-keys ls alice', 'cmi users api-keys ls 3 --json'))
    .action(async (target: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, async ({ client }) => {
        const user = await findUser(client, target);
        const all: UserApiKey[] = [];
        for await (const key of client.users.apiKeys.all(user.id, { perPage: 1000 })) all.push(key);
        const raw = rawFormat(options);
        if (raw) return rendered(raw, { resource: userApiKeyResource, records: all });
        const rows = all.map((key) => [String(key.id), cell(key.description, 60), key.default ? 'yes' : '', datetime(key.created_at), datetime(key.last_used_at)]);
        return human(...table([['ID', 'DESCRIPTION', 'DEFAULT', 'CREATED', 'LAST USED'], ...rows]), `${all.length} API keys of user ${user.id} "${cell(user.login)}"`);
      }));

  remote(keys.command('add <user>'), 'make a user a new API key beside its others (printed once)', 'cmi users api-keys add alice --description "backup job"')
    .requiredOption('--description <text>', 'what the key is for (up to 255 characters)')
    .action(async (target: string, options: { description: string }, command: Command) =>
      run(command, false, async ({ client }) => {
        const user = await findUser(client, target);
        const key = await client.users.apiKeys.create(user.id, options.description);
        return human(`New API key ${key.id} "${cell(key.description)}" for user ${user.id} "${cell(user.login)}" (shown once):`, key.api_key);
      }));

  remote(keys.command('revoke <user> <key-id>'), 'revoke one of a user\'s API keys: refused at once, and the user\'s sessions end', 'cmi users api-keys revoke alice 7')
    .action(async (target: string, id: string, _options: unknown, command: Command) =>
      run(command, false, async ({ client }) => {
        const number = idArgument(id, 'the key');
        const user = await findUser(client, target);
        await client.users.apiKeys.revoke(user.id, number);
        return human(`Revoked API key ${number} of user ${user.id} "${cell(user.login)}"`);
      }));
}
