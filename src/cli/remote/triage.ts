import { type Command, Option } from 'commander';
import type { Activity, ErrorFilters, TriageChange } from '../../client/index.js';
import { activityResource, noteResource } from '../../tracker/triage.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Output, progressBar, table } from '../common/output.js';
import { loginsOf, userIdOf } from './people.js';

const datetime = (value: Date) => `${value.toISOString().slice(0, 19)}+00:00`;

function errorIds(raw: readonly string[]): number[] {
  return raw.map((one) => {
    if (!/^[1-9]\d{0,9}$/.test(one) || Number(one) > 2_147_483_647) throw new RemoteUsageError(`not an error id: "${one}"`);
    return Number(one);
  });
}

/** `--for 2h`: seconds, minutes, hours or days from now. */
function snoozeEnd(until: string | undefined, duration: string | undefined): string | undefined {
  if (until !== undefined && duration !== undefined) throw new RemoteUsageError('give --until or --for, not both');
  if (duration === undefined) return until;
  const match = /^([1-9]\d{0,6})([smhd])$/.exec(duration);
  if (!match) throw new RemoteUsageError(`--for must be a number and s, m, h or d, e.g. 2h (got "${duration}")`);
  const seconds = Number(match[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return new Date(Date.now() + seconds * 1000).toISOString();
}

/** The filters of `cmi errors ls`, for a change to every error they select. */
type FilterFlags = { reported?: boolean; unreported?: boolean; class?: string; q?: string; since?: string; until?: string; host?: string; component?: string; status?: string; assignee?: string };

/**
 * The API's filters of these flags. `--status all` is every status: no status filter (ls's default
 * is `unresolved`; docs/cli.md#triage).
 */
export async function filtersOf(connection: Connection, options: FilterFlags): Promise<ErrorFilters> {
  const assignee = options.assignee === undefined || options.assignee === 'me' || options.assignee === 'none' ? options.assignee
    : await userIdOf(connection, options.assignee, '--assignee');
  const filters: ErrorFilters = {
    reported: options.reported ? true : options.unreported ? false : undefined,
    error_class: options.class, q: options.q, since: options.since, until: options.until, host: options.host, component: options.component,
    status: options.status === 'all' ? undefined : options.status as ErrorFilters['status'], assignee: assignee,
  };
  for (const key of Object.keys(filters) as Array<keyof ErrorFilters>) if (filters[key] === undefined) delete filters[key];
  return filters;
}

/** The options `ls` filters with, on a command that changes what they select. */
export function filterOptions(command: Command, { snooze = false } = {}): Command {
  return command
    .addOption(new Option('--reported', 'errors marked reported').conflicts('unreported'))
    .option('--unreported', 'errors not marked reported')
    .option('--class <class>', 'errors of this exact class')
    .option('--q <text>', 'class or message contains the text')
    .option('--since <datetime>', 'seen at or after')
    .option(snooze ? '--seen-until <datetime>' : '--until <datetime>', 'seen at or before')
    .option('--host <host>', 'with an occurrence on this host')
    .option('--component <component>', 'with an occurrence in this component')
    .option('--status <status>', 'in this triage status: unresolved, resolved, ignored, snoozed, or all (every error)')
    .option('--assignee <who>', 'assigned to me, none, or a user (login, email or id)');
}

/** `cmi errors resolve|reopen|ignore|snooze|assign|note|notes|activity` (docs/cli.md#triage). */
export function remoteTriageCommands({ client }: Connection) {
  const errors = client.infrastructureErrors;
  return {
    /**
     * One change to the errors named, or to every error the filters select; `everything`
     * (`--status all`) with no other filter is every error.
     */
    async change(ids: readonly string[], filters: ErrorFilters, change: TriageChange, verb: string, everything = false): Promise<Output> {
      const named = errorIds(ids);
      if (named.length > 0 && (Object.keys(filters).length > 0 || everything)) throw new RemoteUsageError('give error ids or filters, not both');
      if (named.length === 0 && Object.keys(filters).length === 0 && !everything) {
        throw new RemoteUsageError('give error ids, or filters (--status unresolved for every unresolved error, --status all for every error)');
      }
      if (named.length === 1) {
        const triage = await errors.setTriage(named[0]!, change);
        const login = await loginsOf(client, [triage.assignee_id]);
        return human(`Infrastructure error ${named[0]} ${verb}: ${triage.status}${triage.resolved_in_release === null ? '' : ` in release ${triage.resolved_in_release}`}${triage.assignee_id === null ? '' : `, assigned to ${login(triage.assignee_id)}`}`);
      }
      const selection = named.length > 0 ? { ids: named } : Object.keys(filters).length === 0 ? { all: true as const } : filters;
      // One request changes them all: the bar says it is under way (a terminal only; docs/cli.md#progress).
      const bar = progressBar(verb);
      bar.update(0, named.length > 0 ? named.length : undefined);
      let changed: number;
      try {
        changed = await errors.triageMatching(change, selection);
        bar.update(changed, changed);
      } finally {
        bar.done();
      }
      return human(`${changed} infrastructure ${changed === 1 ? 'error' : 'errors'} ${verb}`);
    },

    async note(raw: string, text: string): Promise<Output> {
      const [id] = errorIds([raw]);
      const note = await errors.addNote(id!, text);
      return human(`Note ${note.id} added to infrastructure error ${id}`);
    },

    async deleteNote(raw: string, noteRaw: string): Promise<Output> {
      const [id, noteId] = errorIds([raw, noteRaw]);
      await errors.deleteNote(id!, noteId!);
      return human(`Note ${noteId} deleted from infrastructure error ${id}`);
    },

    async notes(raw: string, format: RawFormat): Promise<Output> {
      const [id] = errorIds([raw]);
      const page = await errors.notes(id!, { perPage: 1000 });
      if (format) return rendered(format, { resource: noteResource, records: page.items });
      const login = await loginsOf(client, page.items.map((n) => n.author_id));
      return human(
        ...table([['ID', 'AT', 'AUTHOR', 'NOTE'], ...page.items.map((n) => [String(n.id), datetime(n.created_at), cell(login(n.author_id)), cell(n.body)])]),
        `${page.items.length} of ${page.total} notes`,
      );
    },

    async activity(raw: string, format: RawFormat): Promise<Output> {
      const [id] = errorIds([raw]);
      const entries: Activity[] = [];
      for await (const entry of walk(id!)) entries.push(entry);
      if (format) return rendered(format, { resource: activityResource, records: entries });
      const login = await loginsOf(client, entries.map((a) => a.actor_id));
      return human(
        ...table([['AT', 'ACTOR', 'ACTION', 'DETAILS'], ...entries.map((a) => [datetime(a.at), cell(login(a.actor_id)), a.action, cell(JSON.stringify(a.details))])]),
        `${entries.length} entries`,
      );
    },
  };

  async function* walk(id: number): AsyncGenerator<Activity> {
    for (let page = 1; ; page++) {
      const answer = await errors.activity(id, { page, perPage: 1000 });
      yield* answer.items;
      if (page * answer.limit >= answer.total || answer.items.length === 0) return;
    }
  }
}

type ChangeFlags = FilterFlags & { seenUntil?: string };
const everyStatus = (options: ChangeFlags) => options.status === 'all';

/** Adds `resolve`, `reopen`, `ignore`, `snooze`, `assign`, `note`, `notes`, `activity` to `cmi errors`. */
export function addRemoteTriageCommands(errors: Command): void {
  const simple = [['resolve', 'resolved', 'mark errors resolved: the next occurrence of one reopens it (a regression)'], ['reopen', 'unresolved', 'mark errors unresolved'], ['ignore', 'ignored', 'ignore errors: still counted, never alerted']] as const;
  for (const [name, status, description] of simple) {
    const command = filterOptions(remote(errors.command(`${name} [ids...]`), description, `cmi errors ${name} 7`, `cmi errors ${name} --status unresolved --host hv-01`));
    if (name === 'resolve') {
      command.addOption(new Option('--in-release <release>', 'resolved in this release: only an occurrence of a later one reopens it').conflicts('inNextRelease'))
        .option('--in-next-release', 'resolved in the latest release the error was seen in (one error at a time)');
    }
    command.action(async (ids: string[], options: ChangeFlags & { inRelease?: string; inNextRelease?: boolean }, command: Command) => {
      const change: TriageChange = { status, ...(options.inRelease === undefined ? {} : { in_release: options.inRelease }), ...(options.inNextRelease ? { in_next_release: true as const } : {}) };
      await run(command, false, async (c) => remoteTriageCommands(c).change(ids, await filtersOf(c, options), change, name === 'reopen' ? 'reopened' : status, everyStatus(options)));
    });
  }

  filterOptions(remote(errors.command('snooze [ids...]'), 'snooze errors until a time, for a while, or for N more occurrences', 'cmi errors snooze 7 --for 2h', 'cmi errors snooze 7 --occurrences 100'), { snooze: true })
    .option('--until <datetime>', 'until this time')
    .option('--for <duration>', 'for this long: 30m, 2h, 1d')
    .option('--occurrences <n>', 'until it occurs this many more times')
    .action(async (ids: string[], options: ChangeFlags & { for?: string; occurrences?: string }, command: Command) => {
      // --until is the snooze's end here; the filter is --seen-until.
      const end = snoozeEnd(options.until, options.for);
      if (options.occurrences !== undefined && !/^[1-9]\d{0,9}$/.test(options.occurrences)) throw new RemoteUsageError(`--occurrences must be a positive integer (got "${options.occurrences}")`);
      if (end === undefined && options.occurrences === undefined) throw new RemoteUsageError('give --until, --for or --occurrences');
      const change: TriageChange = { status: 'snoozed', ...(end === undefined ? {} : { snoozed_until: end }), ...(options.occurrences === undefined ? {} : { snooze_occurrences: Number(options.occurrences) }) };
      await run(command, false, async (c) => remoteTriageCommands(c).change(ids, await filtersOf(c, { ...options, until: options.seenUntil }), change, 'snoozed', everyStatus(options)));
    });

  filterOptions(remote(errors.command('assign [ids...]'), 'assign errors to a user (--to none unassigns)', 'cmi errors assign 7 --to tom', 'cmi errors assign 7 --to me', 'cmi errors assign --host hv-01 --status unresolved --to none'))
    .requiredOption('--to <user>', 'a user (login, email or id), me, or none')
    .action(async (ids: string[], options: ChangeFlags & { to: string }, command: Command) =>
      run(command, false, async (c) => {
        const assignee = options.to === 'none' ? null : await userIdOf(c, options.to, '--to');
        return remoteTriageCommands(c).change(ids, await filtersOf(c, options), { assignee_id: assignee }, assignee === null ? 'unassigned' : 'assigned', everyStatus(options));
      }));

  remote(errors.command('note <id> [text...]'), 'add a note (plain text) to an error, or delete one with --rm', 'cmi errors note 7 DNS on hv-02, not ours', 'cmi errors note 7 --rm 3')
    .option('--rm <note_id>', 'delete this note instead')
    .action(async (id: string, words: string[], options: { rm?: string }, command: Command) => {
      if (options.rm !== undefined) {
        if (words.length > 0) throw new RemoteUsageError('--rm takes no text');
        await run(command, false, (c) => remoteTriageCommands(c).deleteNote(id, options.rm!));
        return;
      }
      if (words.length === 0) throw new RemoteUsageError('give the note\'s text');
      await run(command, false, (c) => remoteTriageCommands(c).note(id, words.join(' ')));
    });

  rawOptions(remote(errors.command('notes <id>'), 'print the notes on an error, oldest first', 'cmi errors notes 7'))
    .action(async (id: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteTriageCommands(c).notes(id, rawFormat(options))));

  rawOptions(remote(errors.command('activity <id>'), 'print what happened to an error and who did it, oldest first', 'cmi errors activity 7'))
    .action(async (id: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteTriageCommands(c).activity(id, rawFormat(options))));
}
