import type { Command } from 'commander';
import type { LogSource, SourceFilters } from '../../client/index.js';
import { logSourceResource as resource } from '../../logs/log-source.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import type { Connection } from './connection.js';
import type { RawFormat } from './records-output.js';
import { datetime, type ListOptions, listOutput } from './listing.js';
import { cell, type Line, type Output, table } from '../common/output.js';

/** `cmi sources ls` against a server (docs/cli.md#cmi-sources): every host and program that sent log records. */
export function remoteSourceCommands({ client }: Connection) {
  const sourceTable = (sources: LogSource[]): Line[] =>
    table([
      ['ID', 'HOST', 'PROGRAM', 'COMPONENT', 'KEY', 'LINES', 'ERRORS', 'FIRST SEEN', 'LAST SEEN'],
      ...sources.map((s) => [
        String(s.id), cell(s.host, 60), cell(s.program === '' ? '-' : s.program, 40), cell(s.component ?? '-'), s.key_id === null ? '-' : String(s.key_id),
        String(s.lines), String(s.errors), datetime(s.first_seen_at), datetime(s.last_seen_at),
      ]),
    ], (row, column) => (column === 6 && sources[row]!.errors > 0 ? 'red' : undefined));

  return {
    ls(options: ListOptions, filters: SourceFilters, raw: RawFormat): Promise<Output> {
      const api = {
        list: (params: Parameters<typeof client.sources.list>[0]) => client.sources.list({ ...params, ...filters }),
        all: (params: Parameters<typeof client.sources.all>[0]) => client.sources.all({ ...params, ...filters }),
      };
      return listOutput(api, options, raw, { resource, noun: 'sources', table: sourceTable });
    },
  };
}

/** `cmi sources ls`: the log sources of a server. */
export function addRemoteSourceCommands(program: Command): void {
  const sources = program.command('sources').description('log sources on a server: every host and program that sent syslog, journal or OTLP records');
  rawOptions(remote(sources.command('ls'), 'list the log sources, by host and program', 'cmi sources ls --component nova', 'cmi sources ls --host hv-7 --json'))
    .option('--host <host>', 'only this host')
    .option('--program <program>', "only this program ('' for records that named none)")
    .option('--component <component>', 'only this component')
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'sources a page')
    .option('--all', 'every page (a progress bar on a terminal)')
    .action(async (options: ListOptions & SourceFilters & { json?: boolean; xml?: boolean }, command: Command) => {
      const { host, program: name, component } = options;
      const filters: SourceFilters = { ...(host !== undefined ? { host } : {}), ...(name !== undefined ? { program: name } : {}), ...(component !== undefined ? { component } : {}) };
      await run(command, options.xml, (c) => remoteSourceCommands(c).ls(options, filters, rawFormat(options)));
    });
}
