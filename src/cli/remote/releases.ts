import type { Command } from 'commander';
import type { Release } from '../../client/index.js';
import { releaseResource } from '../../tracker/release.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import type { Connection } from './connection.js';
import { datetime, listOutput, type ListOptions } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, table } from '../common/output.js';

/** `cmi releases ls|add` against a server (docs/cli.md#cmi-releases). */
export function remoteReleaseCommands({ client }: Connection) {
  const releaseTable = (releases: Release[]): Line[] =>
    table([['NAME', 'FIRST SEEN', 'NEW ERRORS', 'REGRESSIONS'], ...releases.map((r) => [
      cell(r.name), r.first_seen === null ? '(declared)' : datetime(r.first_seen), String(r.errors_new), String(r.regressions),
    ])]);

  return {
    ls(options: ListOptions, raw: RawFormat): Promise<Output> {
      return listOutput(client.releases, options, raw, { resource: releaseResource, noun: 'releases', table: releaseTable });
    },

    async add(name: string, raw: RawFormat): Promise<Output> {
      const release = await client.releases.declare(name);
      if (raw) return rendered(raw, { resource: releaseResource, record: release });
      return human(release.first_seen === null ? `Declared release ${release.name}` : `Release ${release.name} is known: first seen ${datetime(release.first_seen)}`);
    },
  };
}

type RawFlags = { json?: boolean; xml?: boolean };

/** `cmi releases ls|add`: the releases the errors occurred in, and declaring one before it ships. */
export function addRemoteReleaseCommands(program: Command): void {
  const releases = program.command('releases').description('see the releases errors occurred in, and declare one, on a server');
  rawOptions(remote(releases.command('ls'), 'list the releases, the newest first, with the errors each brought (a page, or --all)', 'cmi releases ls', 'cmi releases ls --all --json'))
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'releases a page (default the server\'s, 25)')
    .option('--all', 'every page')
    .action(async (options: ListOptions & RawFlags, command: Command) => run(command, options.xml, (c) => remoteReleaseCommands(c).ls(options, rawFormat(options))));

  rawOptions(remote(releases.command('add <name>'), 'declare a release ahead of its first event (known already: said so, unchanged)', 'cmi releases add 6.8.0'))
    .action(async (name: string, options: RawFlags, command: Command) => run(command, options.xml, (c) => remoteReleaseCommands(c).add(name, rawFormat(options))));
}
