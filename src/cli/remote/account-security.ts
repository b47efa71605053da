import type { Command } from 'commander';
import type { AccessLogItem } from '../../client/index.js';
import { lastAccessLogItemResource } from '../../users/account-security.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { RemoteUsageError } from './connection.js';
import { idArgument } from './listing.js';
import { rendered } from './records-output.js';
import { findUser } from './users.js';
import { cell, human, table } from '../common/output.js';

const datetime = (value: Date) => `${value.toISOString().slice(0, 19)}+00:00`;

/**
 * `cmi users sessions drop <user>|--all`, `cmi users unlock-account <user-id> <token>` and
 * `cmi users access-log <user>` on a server
 * (docs/cli.md#sessions-and-access-history). Registered beside `cmi users` by commands.ts.
 */
export function addRemoteAccountSecurityCommands(program: Command): void {
  const users = program.commands.find((command) => command.name() === 'users');
  if (users === undefined) throw new Error('addRemoteAccountSecurityCommands: cmi users comes first');
  const sessions = users.command('sessions').description('a user\'s sessions on the server (cookies of the API and the console)');

  remote(sessions.command('drop [user]'), 'end every session of a user at once (--all: of every user); passwords and API keys keep working', 'cmi users sessions drop alice', 'cmi users sessions drop --all')
    .option('--all', 'every user\'s sessions (OnApp\'s drop_all; needs users.update)')
    .action(async (target: string | undefined, options: { all?: boolean }, command: Command) =>
      run(command, false, async ({ client }) => {
        if (options.all === true && target !== undefined) throw new RemoteUsageError('give a user or --all, not both');
        if (options.all === true) {
          await client.users.sessions.dropAll();
          return human('Ended every session of every user (passwords and API keys keep working)');
        }
        if (target === undefined) throw new RemoteUsageError('give a user (id, login or email), or --all');
        const user = await findUser(client, target);
        await client.users.sessions.drop(user.id);
        return human(`Ended every session of user ${user.id} "${cell(user.login)}" (its password and API keys keep working)`);
      }));

  remote(users.command('unlock-account <user-id> <unlock-token>'), 'end a user\'s lockout with the unlock_token its lock\'s mail carried (once; no credentials needed, the token is one)', 'cmi users unlock-account 2 Zk3q8GfZ0xWbq5RkTq1mJc8cXj6sK3dVv0yPq2nLh4E --url https://cmi.example.com')
    .action(async (id: string, token: string, _options: unknown, command: Command) =>
      run(command, false, async ({ client }) => {
        const userId = idArgument(id, 'the user');
        await client.users.unlockAccount(userId, token);
        return human(`Unlocked user ${userId}: its password works again`);
      }, 'none'));

  rawOptions(remote(users.command('access-log <user>'), 'print a user\'s last access log: its sign-ins and refused sign-ins, oldest first', 'cmi users access-log alice', 'cmi users access-log 3 --json'))
    .action(async (target: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, async ({ client }) => {
        const user = await findUser(client, target);
        const all: AccessLogItem[] = [];
        for await (const item of client.users.lastAccessLog.all(user.id, { perPage: 1000 })) all.push(item);
        const raw = rawFormat(options);
        if (raw) return rendered(raw, { resource: lastAccessLogItemResource, records: all });
        const rows = all.map((item) => [datetime(item.created_at), cell(item.ip), item.credential, item.success ? 'yes' : 'REFUSED', cell(item.user_agent ?? '-', 60)]);
        return human(...table([['AT', 'ADDRESS', 'CREDENTIAL', 'SIGNED IN', 'USER AGENT'], ...rows]), `${all.length} sign-ins of user ${user.id} "${cell(user.login)}"`);
      }));
}
