import type { Command } from 'commander';
import type { CmiClient, SavedSearch } from '../../client/index.js';
import { savedSearchResource } from '../../tracker/saved-search.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { listOutput, type ListOptions } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, table } from '../common/output.js';

/** The saved search a command names: an id, else a name. */
async function findSearch(client: CmiClient, target: string): Promise<SavedSearch> {
  if (/^\d+$/.test(target)) return client.savedSearches.get(Number(target));
  const named: SavedSearch[] = [];
  for await (const search of client.savedSearches.all({ perPage: 200 })) if (search.name === target) named.push(search);
  if (named.length === 1) return named[0]!;
  throw new RemoteUsageError(named.length === 0 ? `no saved search is named "${target}" (cmi searches ls)` : `${named.length} saved searches are named "${target}": give its id (cmi searches ls)`);
}

/** `cmi searches ls|add|rm` against a server (docs/cli.md#cmi-searches). */
export function remoteSavedSearchCommands({ client }: Connection) {
  const searchTable = (searches: SavedSearch[]): Line[] =>
    table([['ID', 'NAME', 'SHARED', 'OWNER', 'QUERY'], ...searches.map((s) => [String(s.id), cell(s.name), s.shared ? 'yes' : 'no', String(s.user_id), cell(s.query)])]);
  return {
    ls(options: ListOptions, raw: RawFormat): Promise<Output> {
      return listOutput(client.savedSearches, options, raw, { resource: savedSearchResource, noun: 'saved searches', table: searchTable });
    },

    async add(name: string, query: string, shared: boolean, raw: RawFormat): Promise<Output> {
      const search = await client.savedSearches.create({ name, query, shared });
      if (raw) return rendered(raw, { resource: savedSearchResource, record: search });
      return human(`Saved search ${search.id} "${search.name}"${search.shared ? ' (shared)' : ''}: cmi errors ls --saved ${search.id}`);
    },

    async rm(target: string): Promise<Output> {
      const search = await findSearch(client, target);
      await client.savedSearches.delete(search.id);
      return human(`Deleted saved search ${search.id} "${search.name}"`);
    },
  };
}

type RawFlags = { json?: boolean; xml?: boolean };

/** `cmi searches ls|add|rm`: the own saved searches and the shared ones of others. */
export function addRemoteSavedSearchCommands(program: Command): void {
  const searches = program.command('searches').description('manage saved searches of the errors list, on a server');
  rawOptions(remote(searches.command('ls'), 'list the own saved searches and the shared ones (a page, or --all)', 'cmi searches ls'))
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'searches a page (default the server\'s, 25)')
    .option('--all', 'every page')
    .action(async (options: ListOptions & RawFlags, command: Command) => run(command, options.xml, (c) => remoteSavedSearchCommands(c).ls(options, rawFormat(options))));

  rawOptions(remote(searches.command('add <name> <query...>'), 'save a search in the search language (docs/search.md)', 'cmi searches add "hv-07 storage" host:hv-07 component:storage --shared'))
    .option('--shared', 'let everyone who may read errors see and run it')
    .action(async (name: string, query: string[], options: RawFlags & { shared?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteSavedSearchCommands(c).add(name, query.join(' '), options.shared === true, rawFormat(options))));

  remote(searches.command('rm <search>'), 'delete an own saved search (by id or name)', 'cmi searches rm "hv-07 storage"')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteSavedSearchCommands(c).rm(target)));
}
