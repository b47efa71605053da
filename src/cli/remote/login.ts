import { hostname } from 'node:os';
import type { Command } from 'commander';
import { CmiNotFoundError } from '../../client/index.js';
import { globals, rawOptions, remote, run } from './command.js';
import { connect, RemoteUsageError } from './connection.js';
import { saveProfile } from './profiles.js';
import { findUser } from './users.js';
import { exact, human, write } from '../common/output.js';
import { localVersion, localVersionOutput } from '../ops/local-version.js';
import { cliEnv } from '../common/io.js';

/**
 * `cmi version` and `cmi login`: check the connection to a server, and save it as a profile
 * (docs/cli.md#profiles).
 */
export function addLoginCommands(program: Command): void {
  rawOptions(remote(program.command('version'), 'print the server\'s API version (and check the credentials); with --local, this cmi\'s versions and the configured database\'s schema, without a server', 'cmi version --url https://cmi.example.com --user admin --password-stdin < pw.txt', 'cmi version --local --json'))
    .option('--local', 'no server: cmi\'s version, the OnApp version it reports, node\'s, and the schema version of the database DATABASE_URL names (docs/operations.md#know-what-runs)')
    .action(async (options: { json?: boolean; xml?: boolean; local?: boolean }, command: Command) => {
      if (options.local) {
        if (options.xml) throw new RemoteUsageError('--local prints text or --json, not --xml');
        write(localVersionOutput(await localVersion(), options.json === true));
        return;
      }
      await run(command, options.xml, async ({ client }) => {
        const version = await client.version();
        if (options.json) return exact(JSON.stringify({ version }));
        if (options.xml) return exact(`<?xml version="1.0" encoding="UTF-8"?>\n<cmi>\n  <version>${version.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</version>\n</cmi>`);
        return human(version);
      });
    });

  remote(
    program.command('login'),
    'save a profile (URL, login and an API key, never the password) so later commands need no credentials. With a password it makes the user a new named API key, "cmi on <host>", beside its others (on a server without named keys, a new key that replaces the previous one); with CMI_API_KEY it saves that key',
    'cmi login --url https://cmi.example.com --user admin --password-stdin < pw.txt',
    'CMI_API_KEY=... cmi login --url https://panel.example.com --user ops --profile panel',
  ).action(async (_options: unknown, command: Command) => {
    const options = globals(command);
    const env = cliEnv();
    if (options.url === undefined && (env.CMI_URL ?? '') === '') throw new RemoteUsageError('give --url URL');
    if (options.user === undefined && (env.CMI_USER ?? '') === '') throw new RemoteUsageError('give --user LOGIN');
    const name = options.profile ?? 'default';
    // The profile being written is not read for credentials.
    const { client, url, login } = await connect(options, env, 'ignore');
    await client.version();
    let apiKey = env.CMI_API_KEY;
    let made = '';
    if (options.passwordStdin || (env.CMI_PASSWORD ?? '') !== '' || apiKey === undefined || apiKey === '') {
      const me = await findUser(client, login);
      const description = `cmi on ${hostname()}`.slice(0, 255);
      try {
        const key = await client.users.apiKeys.create(me.id, description);
        apiKey = key.api_key;
        made = `; a new API key ${key.id} "${description}" was made for it (the user's other keys go on working)`;
      } catch (error) {
        // A server without named keys (an older cmi, an OnApp panel): its one key, made anew.
        if (!(error instanceof CmiNotFoundError)) throw error;
        apiKey = (await client.users.makeNewApiKey(me.id)).api_key;
        made = '; a new API key was made for it (the previous key of this user no longer works)';
      }
    }
    const path = saveProfile(name, { url, login, api_key: apiKey }, env);
    write(human(`Saved profile "${name}" (${login} at ${url}) in ${path}${made}`));
  });
}
