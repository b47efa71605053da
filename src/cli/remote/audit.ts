import type { Command } from 'commander';
import type { AuditEvent, AuditFilters } from '../../client/index.js';
import { auditEventResource as resource } from '../../audit/audit-event.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { positive } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, progressBar, table } from '../common/output.js';

const datetime = (value: Date) => `${value.toISOString().slice(0, 19)}+00:00`;

/** A list's CHANGES column is at most this many characters. */
const CHANGES_COLUMN_CHARS = 80;

export interface AuditListParams extends AuditFilters {
  page?: number;
  perPage?: number;
}

/** The events as the API sent them: `changes` back to its JSON text, as the renderers take it. */
const asServed = (events: readonly AuditEvent[]) => events.map((event) => ({ ...event, changes: JSON.stringify(event.changes) }));

/** `cmi audit` against a server (holders of audit_log.read): the audit trail, the newest first. */
export function remoteAuditCommands({ client }: Connection) {
  const eventTable = (events: AuditEvent[]): Line[] =>
    table([
      ['ID', 'AT', 'ACTOR', 'CREDENTIAL', 'ADDRESS', 'ACTION', 'TARGET', 'CHANGES'],
      ...events.map((e) => {
        const changes = JSON.stringify(e.changes);
        return [
          String(e.id), datetime(e.at), cell(e.actor_id === null ? e.actor_login : `${e.actor_login} (${e.actor_id})`), cell(e.credential), cell(e.address ?? '-'),
          cell(e.action), cell(e.target_id === null ? e.target_type : `${e.target_type} ${e.target_id}`),
          cell(changes.length > CHANGES_COLUMN_CHARS ? `${changes.slice(0, CHANGES_COLUMN_CHARS - 1)}…` : changes),
        ];
      }),
    ]);

  return {
    async ls({ page, perPage, ...filters }: AuditListParams, all: boolean, raw: RawFormat): Promise<Output> {
      if (all) {
        if (page !== undefined) throw new RemoteUsageError('--all walks every page: leave out --page');
        const bar = progressBar('events');
        const events: AuditEvent[] = [];
        try {
          const first = await client.auditLog.list({ ...filters, perPage, page: 1 });
          for await (const event of client.auditLog.all({ ...filters, perPage: first.limit })) {
            events.push(event);
            bar.update(events.length, Math.max(first.total, events.length));
          }
        } finally {
          bar.done();
        }
        if (raw) return rendered(raw, { resource, records: asServed(events) });
        return human(...eventTable(events), `${events.length} ${events.length === 1 ? 'event' : 'events'}`);
      }
      const result = await client.auditLog.list({ ...filters, page, perPage });
      if (raw) return rendered(raw, { resource, records: asServed(result.items) });
      const pages = Math.max(1, Math.ceil(result.total / result.limit));
      return human(...eventTable(result.items), `${result.items.length} of ${result.total} events (page ${result.page} of ${pages})`);
    },
  };
}

interface AuditOptions {
  actor?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  since?: string;
  until?: string;
  page?: string;
  perPage?: string;
  all?: boolean;
  json?: boolean;
  xml?: boolean;
}

/** `cmi audit`: the server's audit trail (docs/cli.md#cmi-audit). */
export function addRemoteAuditCommands(program: Command): void {
  rawOptions(remote(program.command('audit'), 'list the audit trail of the server, the newest first (holders of audit_log.read)',
    'cmi audit --actor 3 --since 2026-11-01', 'cmi audit --action user.update --target-type user --target-id 7', 'cmi audit --all --json'))
    .option('--actor <id>', 'only what this user did')
    .option('--action <action>', 'only this action, e.g. user.update')
    .option('--target-type <type>', 'only changes to this kind of target, e.g. user')
    .option('--target-id <id>', 'only changes to the target of this id')
    .option('--since <time>', 'only events at or after this time (e.g. 2026-11-01 or 2026-11-01T10:00:00Z)')
    .option('--until <time>', 'only events at or before this time')
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'events a page')
    .option('--all', 'every page (a progress bar on a terminal)')
    .action(async (options: AuditOptions, command: Command) => {
      const params: AuditListParams = {
        actor_id: positive(options.actor, '--actor'),
        action: options.action,
        target_type: options.targetType,
        target_id: positive(options.targetId, '--target-id'),
        since: options.since,
        until: options.until,
        page: positive(options.page, '--page'),
        perPage: positive(options.perPage, '--per-page'),
      };
      await run(command, options.xml, (c) => remoteAuditCommands(c).ls(params, options.all === true, rawFormat(options)));
    });
}
