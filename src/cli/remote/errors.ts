import { type Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import type { ErrorListParams, ErrorReport, InfrastructureError, Note, Triage } from '../../client/index.js';
import { infrastructureErrorResource as resource } from '../../tracker/infrastructure-error.resource.js';
import { histogramBucketResource } from '../../tracker/error-details.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, progressBar, type Run, styled, table } from '../common/output.js';
import { fromCwd, readStdin } from '../common/io.js';
import { addRemoteTriageCommands, filtersOf } from './triage.js';
import { loginsOf } from './people.js';

/** The list's MESSAGE column is at most this many characters; `show` lists this many occurrences and hosts. */
const MESSAGE_COLUMN_CHARS = 60;
const TRIAGE_AT_ONCE = 16;
const SHOWN = 5;
const BAR_CHARS = 40;

function errorId(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw new RemoteUsageError(`not an error id: "${raw}"`);
  return Number(raw);
}

const datetime = (value: Date) => `${value.toISOString().slice(0, 19)}+00:00`;

/** `name: text`, the name bold on a terminal; a field of several lines is printed one line each, indented, and the writer escapes the rest (docs/cli.md#output). */
const key = (name: string, text: string): (string | Run)[] => [styled('bold', `${name}:`), text === '' ? '' : ` ${text}`];

/** `cmi errors ls|show|report|rm|histogram` against a server (administrators only). */
export function remoteErrorCommands({ client }: Connection) {
  /** The table of `ls`: each error's triage asked for beside it (the list's records hold nine fields; docs/api.md#error-triage), assignees by login. */
  const errorTable = async (errors: InfrastructureError[]): Promise<Line[]> => {
    // At most TRIAGE_AT_ONCE requests in flight: `ls --all` may list thousands.
    const triages: Triage[] = [];
    for (let i = 0; i < errors.length; i += TRIAGE_AT_ONCE) {
      triages.push(...await Promise.all(errors.slice(i, i + TRIAGE_AT_ONCE).map((e) => client.infrastructureErrors.triage(e.id))));
    }
    const login = await loginsOf(client, triages.map((t) => t.assignee_id));
    return table([
      ['ID', 'COUNT', 'LAST SEEN', 'STATUS', 'ASSIGNEE', 'REPORTED', 'CLASS', 'MESSAGE'],
      ...errors.map((e, i) => [String(e.id), String(e.counter), datetime(e.updated_at), triages[i]!.status, cell(login(triages[i]!.assignee_id)), e.reported ? 'yes' : 'no', cell(e.error_class), cell(e.message, MESSAGE_COLUMN_CHARS)]),
    ], (row, column) => (column === 5 && !errors[row]!.reported ? 'yellow' : undefined));
  };

  /** The error's latest notes, oldest of them first: the list is oldest first, so its last page (and the one before, for a short last page). */
  async function latestNotes(id: number): Promise<{ items: Note[]; total: number }> {
    const first = await client.infrastructureErrors.notes(id, { perPage: SHOWN });
    if (first.total <= first.items.length) return first;
    const last = Math.ceil(first.total / first.limit);
    const pages = await Promise.all([last - 1, last].map((page) => client.infrastructureErrors.notes(id, { page, perPage: first.limit })));
    return { items: pages.flatMap((page) => page.items).slice(-SHOWN), total: first.total };
  }

  return {
    async ls(params: ErrorListParams, all: boolean, raw: RawFormat): Promise<Output> {
      if (all) {
        if (params.page !== undefined) throw new RemoteUsageError('--all walks every page: leave out --page');
        const bar = progressBar('errors');
        const errors: InfrastructureError[] = [];
        try {
          const first = await client.infrastructureErrors.list({ ...params, page: 1 });
          for await (const error of client.infrastructureErrors.all({ ...params, perPage: first.limit })) {
            errors.push(error);
            bar.update(errors.length, Math.max(first.total, errors.length));
          }
        } finally {
          bar.done();
        }
        if (raw) return rendered(raw, { resource, records: errors });
        return human(...await errorTable(errors), `${errors.length} errors`);
      }
      const result = await client.infrastructureErrors.list(params);
      if (raw) return rendered(raw, { resource, records: result.items });
      const pages = Math.max(1, Math.ceil(result.total / result.limit));
      return human(...await errorTable(result.items), `${result.items.length} of ${result.total} errors (page ${result.page} of ${pages})`);
    },

    async show(raw: string, format: RawFormat): Promise<Output> {
      const id = errorId(raw);
      const record = await client.infrastructureErrors.get(id);
      if (format) return rendered(format, { resource, record });
      const [occurrences, hosts, components, triage, notes] = await Promise.all([
        client.infrastructureErrors.occurrences(id, { perPage: SHOWN }),
        client.infrastructureErrors.breakdown(id, { by: 'host', perPage: SHOWN }),
        client.infrastructureErrors.breakdown(id, { by: 'component', perPage: SHOWN }),
        client.infrastructureErrors.triage(id),
        latestNotes(id),
      ]);
      const login = await loginsOf(client, [triage.assignee_id, triage.resolved_by_id, ...notes.items.map((n) => n.author_id)]);
      const snooze = triage.status !== 'snoozed' ? [] : [
        ...(triage.snoozed_until === null ? [] : [key('snoozed_until', datetime(triage.snoozed_until))]),
        ...(triage.snooze_occurrences === null ? [] : [key('snooze_occurrences', String(triage.snooze_occurrences))]),
      ];
      const [firstLine, ...moreLines] = record.message.split(/\r\n|\r|\n/);
      return human(
        key('id', String(record.id)),
        key('backtrace', record.backtrace === '' ? '(none)' : ''),
        ...(record.backtrace === '' ? [] : record.backtrace.split(/\r\n|\r|\n/).map((line) => `    ${line}`)),
        key('counter', String(record.counter)),
        key('created_at', datetime(record.created_at)),
        key('error_class', record.error_class),
        key('fingerprint', record.fingerprint),
        key('message', firstLine!),
        ...moreLines.map((line) => `    ${line}`),
        key('reported', String(record.reported)),
        key('updated_at', datetime(record.updated_at)),
        '',
        `Latest occurrences (${occurrences.items.length} of ${occurrences.total} kept):`,
        ...table([
          ['OCCURRED AT', 'HOST', 'COMPONENT', 'REQUEST ID'],
          ...occurrences.items.map((o) => [datetime(o.occurred_at), cell(o.host ?? '-'), cell(o.component ?? '-'), cell(o.request_id ?? '-')]),
        ], undefined, '  '),
        '',
        'Triage:',
        ...[
          key('status', triage.status),
          ...snooze,
          key('assignee', login(triage.assignee_id)),
          ...(triage.resolved_at === null ? [] : [key('resolved', `${datetime(triage.resolved_at)} by ${login(triage.resolved_by_id)}`)]),
          ...(triage.regressed_at === null ? [] : [key('regressed_at', datetime(triage.regressed_at))]),
        ].map((line): Line => ['  ', ...line]),
        '',
        `Latest notes (${notes.items.length} of ${notes.total}):`,
        ...(notes.items.length === 0 ? [] : table([['AT', 'AUTHOR', 'NOTE'], ...notes.items.map((n) => [datetime(n.created_at), cell(login(n.author_id)), cell(n.body)])], undefined, '  ')),
        '',
        `By host (${hosts.items.length} of ${hosts.total}):`,
        ...table([['HOST', 'COUNT'], ...hosts.items.map((h) => [cell(h.value ?? '-'), String(h.count)])], undefined, '  '),
        '',
        `By component (${components.items.length} of ${components.total}):`,
        ...table([['COMPONENT', 'COUNT'], ...components.items.map((h) => [cell(h.value ?? '-'), String(h.count)])], undefined, '  '),
      );
    },

    async report(raw: string): Promise<Output> {
      const record = await client.infrastructureErrors.report(errorId(raw));
      return human(`Reported infrastructure error ${record.id} (${record.error_class}: ${cell(record.message)})`);
    },

    async rm(raw: string): Promise<Output> {
      const id = errorId(raw);
      const record = await client.infrastructureErrors.get(id);
      await client.infrastructureErrors.delete(id);
      return human(`Deleted infrastructure error ${record.id} (${record.error_class}: ${cell(record.message)})`);
    },

    /** Records one report, as a reporter does (docs/api.md#post-sysadmin_toolsinfrastructureerrors): `cmi errors send`. */
    async send(report: ErrorReport): Promise<Output> {
      const { error, created } = await client.infrastructureErrors.record(report);
      return human(`${created ? 'Recorded new' : 'Counted on'} infrastructure error ${error.id} (${error.error_class}: ${cell(error.message)}), ${error.counter} ${error.counter === 1 ? 'occurrence' : 'occurrences'}`);
    },

    /** The counts of `period`, one row a bucket, with a bar scaled to the largest. */
    async histogram(raw: string, period: string | undefined, format: RawFormat): Promise<Output> {
      if (period !== undefined && !['24h', '7d', '30d'].includes(period)) throw new RemoteUsageError(`--period must be 24h, 7d or 30d (got "${period}")`);
      const buckets = await client.infrastructureErrors.histogram(errorId(raw), { period: period as '24h' | '7d' | '30d' | undefined });
      if (format) return rendered(format, { resource: histogramBucketResource, records: buckets });
      const largest = Math.max(1, ...buckets.map((b) => b.count));
      const rows = buckets.map((b) => [datetime(b.start), String(b.count), '#'.repeat(Math.ceil((b.count / largest) * BAR_CHARS))]);
      const total = buckets.reduce((sum, b) => sum + b.count, 0);
      return human(...table([['START', 'COUNT', ''], ...rows]), `${total} occurrences in ${buckets.length} buckets`);
    },
  };
}

type ErrorFlags = { saved?: string; status?: string; assignee?: string; reported?: boolean; unreported?: boolean; class?: string; q?: string; since?: string; until?: string; host?: string; component?: string; sort?: string; direction?: string; page?: string; perPage?: string; all?: boolean; json?: boolean; xml?: boolean };

/** A backtrace file's text; one that cannot be read is a usage error naming it. */
function readBacktrace(path: string): string {
  try {
    return readFileSync(fromCwd(path), 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new RemoteUsageError(`--backtrace-file: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

/** `cmi errors ls|show|send|report|rm|histogram`. */
export function addRemoteErrorCommands(program: Command): void {
  const errors = program.command('errors').description('infrastructure errors on a server (cmi local errors: in the configured database)');
  rawOptions(remote(errors.command('ls'), 'list infrastructure errors on the server, the latest seen first', 'cmi errors ls host:hv-07 release:6.7.2 iscsi_login', 'cmi errors ls --status all --all --since 2026-11-20T00:00:00Z'))
    .argument('[query...]', 'a search (docs/search.md): host:hv-07 !component:billing counter:>100 last_seen:-1h "free text"')
    .addOption(new Option('--reported', 'only errors marked reported').conflicts('unreported'))
    .option('--unreported', 'only errors not marked reported')
    .option('--class <class>', 'only errors of this exact class')
    .option('--q <query>', 'a search, as the QUERY arguments (docs/search.md)')
    .option('--saved <search>', 'a saved search (name or id), narrowed by QUERY; every status unless --status says (cmi searches ls)')
    .option('--since <datetime>', 'seen at or after')
    .option('--until <datetime>', 'seen at or before')
    .option('--host <host>', 'with an occurrence on this host')
    .option('--component <component>', 'with an occurrence in this component')
    .option('--status <status>', 'in this triage status: unresolved (default), resolved, ignored, snoozed, or all')
    .option('--assignee <who>', 'assigned to me, none, or a user (login, email or id)')
    .option('--sort <field>', 'updated_at (default), created_at or counter')
    .option('--direction <direction>', 'desc (default) or asc')
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'errors a page')
    .option('--all', 'every page (a progress bar on a terminal)')
    .action(async (query: string[], options: ErrorFlags, command: Command) => {
      const q = [options.q, ...query].filter((part) => part !== undefined && part !== '').join(' ') || undefined;
      const number = (raw: string | undefined, name: string) => {
        if (raw === undefined) return undefined;
        if (!/^[1-9]\d{0,5}$/.test(raw)) throw new RemoteUsageError(`${name} must be a positive integer (got "${raw}")`);
        return Number(raw);
      };
      const params = {
        reported: options.reported ? true : options.unreported ? false : undefined,
        error_class: options.class, q, saved: options.saved, since: options.since, until: options.until, host: options.host, component: options.component,
        sort: options.sort as never, direction: options.direction as never, page: number(options.page, '--page'), perPage: number(options.perPage, '--per-page'),
      };
      await run(command, options.xml, async (c) => remoteErrorCommands(c).ls({
        ...params,
        // People's default is the errors still to look at; the API's, every status (docs/cli.md#triage). A
        // search that names a status (is:, status:) says it itself, and so does a saved one.
        ...await filtersOf(c, { status: options.status ?? (options.saved !== undefined || (q !== undefined && /(^|\s)!?(is|status):/.test(q)) ? 'all' : 'unresolved'), assignee: options.assignee }),
      }, options.all === true, rawFormat(options)));
    });

  rawOptions(remote(errors.command('show <id>'), 'print an error on the server, its latest occurrences and the hosts it occurred on', 'cmi errors show 7', 'cmi errors show 7 --xml'))
    .action(async (id: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteErrorCommands(c).show(id, rawFormat(options))));

  remote(errors.command('report <id>'), 'mark an error reported on the server, which delivers it first to its report webhook when one is set', 'cmi errors report 7')
    .action(async (id: string, _options: unknown, command: Command) => run(command, false, (c) => remoteErrorCommands(c).report(id)));

  remote(errors.command('send'), 'record an error on the server, as a reporter does: from a shell script or cron (an administrator, or a login holding infrastructure_errors.create)',
    'cmi errors send --class Backup::Failed --message "nightly dump exited 2" --host db-01 --component backup',
    'cmi errors send --class Cron::Failed --message "$(tail -1 /var/log/job.log)" --backtrace-file /tmp/job.trace')
    .requiredOption('--class <class>', 'the error\'s class (reports of one class and backtrace are counted on one error: docs/error-grouping.md)')
    .option('--message <message>', 'its message')
    .option('--host <host>', 'the host it occurred on (default: none)')
    .option('--component <component>', 'what failed: backup, storage, ...')
    .option('--backtrace-file <file>', 'its backtrace, one frame a line, from this file (- for standard input)')
    .option('--request-id <id>', 'the request it broke')
    .action(async (options: { class: string; message?: string; host?: string; component?: string; backtraceFile?: string; requestId?: string }, command: Command) => {
      const backtrace = options.backtraceFile === undefined ? undefined : options.backtraceFile === '-' ? await readStdin() : readBacktrace(options.backtraceFile);
      const report: ErrorReport = {
        error_class: options.class,
        ...(options.message === undefined ? {} : { message: options.message }),
        ...(backtrace === undefined ? {} : { backtrace }),
        ...(options.host === undefined ? {} : { host: options.host }),
        ...(options.component === undefined ? {} : { component: options.component }),
        ...(options.requestId === undefined ? {} : { request_id: options.requestId }),
      };
      await run(command, false, (c) => remoteErrorCommands(c).send(report));
    });

  remote(errors.command('rm <id>'), 'delete an error on the server and everything kept about it', 'cmi errors rm 7')
    .action(async (id: string, _options: unknown, command: Command) => run(command, false, (c) => remoteErrorCommands(c).rm(id)));

  rawOptions(remote(errors.command('histogram <id>'), 'print the occurrences of an error over time', 'cmi errors histogram 7 --period 7d'))
    .option('--period <period>', '24h (default), 7d or 30d')
    .action(async (id: string, options: { period?: string; json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteErrorCommands(c).histogram(id, options.period, rawFormat(options))));

  addRemoteTriageCommands(errors);
}
