import type { Command } from 'commander';
import type { IngestKey, IngestKeyChanges, NewIngestKey } from '../../client/index.js';
import { ingestKeyResource as resource } from '../../ingest/ingest-key.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { positive } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, styled, table } from '../common/output.js';

const datetime = (value: Date) => `${value.toISOString().slice(0, 19)}+00:00`;
const describe = (key: Pick<IngestKey, 'id' | 'label'>) => `${key.id} "${key.label}"`;


function keyId(raw: string): number {
  return positive(raw, 'the key id') as number;
}

/** `cmi ingest-keys add|ls|show|edit|revoke` against a server (docs/cli.md#cmi-ingest-keys). */
export function remoteIngestKeyCommands({ client }: Connection) {
  const keyTable = (keys: IngestKey[]): Line[] =>
    table([
      ['ID', 'LABEL', 'COMPONENT', 'ENABLED', 'LIMIT/MIN', 'DROPPED', 'LAST USED', 'DSN'],
      ...keys.map((k) => [String(k.id), cell(k.label, 40), cell(k.component ?? '-'), k.enabled ? 'yes' : 'no', String(k.rate_limit_per_minute), String(k.dropped), k.last_used_at === null ? '-' : datetime(k.last_used_at), cell(k.dsn)]),
    ], (row, column) => (column === 3 && !keys[row]!.enabled ? 'yellow' : undefined));

  return {
    async ls(options: { page?: string; perPage?: string; all?: boolean }, raw: RawFormat): Promise<Output> {
      const page = positive(options.page, '--page');
      const perPage = positive(options.perPage, '--per-page');
      if (options.all && page !== undefined) throw new RemoteUsageError('--all walks every page: leave out --page');
      if (options.all) {
        const keys: IngestKey[] = [];
        for await (const key of client.ingestKeys.all({ perPage })) keys.push(key);
        if (raw) return rendered(raw, { resource, records: keys });
        return human(...keyTable(keys), `${keys.length} ingest keys`);
      }
      const result = await client.ingestKeys.list({ page, perPage });
      if (raw) return rendered(raw, { resource, records: result.items });
      const pages = Math.max(1, Math.ceil(result.total / result.limit));
      return human(...keyTable(result.items), `${result.items.length} of ${result.total} ingest keys (page ${result.page} of ${pages})`);
    },

    async show(id: string, raw: RawFormat): Promise<Output> {
      const key = await client.ingestKeys.get(keyId(id));
      if (raw) return rendered(raw, { resource, record: key });
      const value = (v: unknown) => (v === null || v === '' ? '-' : v instanceof Date ? datetime(v) : typeof v === 'string' ? v : JSON.stringify(v));
      const lines = resource.fields.map(([name]) => [name, value((key as unknown as Record<string, unknown>)[name])] as const);
      const width = Math.max(...lines.map(([name]) => name.length));
      return human(...lines.map(([name, text]): Line => [styled('bold', `${name}:`.padEnd(width + 1)), ` ${cell(text)}`]));
    },

    async create(fields: NewIngestKey): Promise<Output> {
      const key = await client.ingestKeys.create(fields);
      return human(`Created ingest key ${describe(key)}; its DSN:`, cell(key.dsn));
    },

    async edit(id: string, changes: IngestKeyChanges): Promise<Output> {
      if (Object.keys(changes).length === 0) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help ingest-keys edit)');
      await client.ingestKeys.update(keyId(id), changes);
      const key = await client.ingestKeys.get(keyId(id));
      return human(`Updated ingest key ${describe(key)}`);
    },

    async revoke(id: string): Promise<Output> {
      const key = await client.ingestKeys.get(keyId(id));
      await client.ingestKeys.revoke(key.id);
      return human(`Revoked ingest key ${describe(key)}: every server process refuses it from now on`);
    },
  };
}

type KeyFlags = { label?: string; component?: string; noComponent?: boolean; enable?: boolean; disable?: boolean; rateLimit?: string; origins?: string };

function keyFields(options: KeyFlags): IngestKeyChanges {
  if (options.enable && options.disable) throw new RemoteUsageError('give --enable or --disable, not both');
  const fields: IngestKeyChanges = {};
  if (options.label !== undefined) fields.label = options.label;
  if (options.component !== undefined) fields.component = options.component;
  if (options.noComponent) fields.component = null;
  if (options.enable) fields.enabled = true;
  if (options.disable) fields.enabled = false;
  if (options.rateLimit !== undefined) fields.rate_limit_per_minute = positive(options.rateLimit, '--rate-limit');
  if (options.origins !== undefined) fields.allowed_origins = options.origins;
  return fields;
}

function keyOptions(command: Command): Command {
  return command
    .option('--component <name>', 'the component its events are recorded for when they name none')
    .option('--rate-limit <n>', 'events a minute (per server process; default 1000)')
    .option('--origins <origins>', 'origins browsers may send from, separated by spaces, or * ("" for none)');
}

/** `cmi ingest-keys add|ls|show|edit|revoke`: write-only keys for the Sentry SDKs (docs/sentry.md). */
export function addRemoteIngestKeyCommands(program: Command): void {
  const keys = program.command('ingest-keys').description('ingest keys on a server: the DSNs Sentry SDKs report with (docs/sentry.md)');
  rawOptions(remote(keys.command('ls'), 'list the ingest keys, with their DSNs', 'cmi ingest-keys ls', 'cmi ingest-keys ls --all --json'))
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'keys a page')
    .option('--all', 'every page')
    .action(async (options: { page?: string; perPage?: string; all?: boolean; json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteIngestKeyCommands(c).ls(options, rawFormat(options))));

  rawOptions(remote(keys.command('show <id>'), 'print an ingest key and its DSN', 'cmi ingest-keys show 3'))
    .action(async (id: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteIngestKeyCommands(c).show(id, rawFormat(options))));

  // `add --label`, as every group adds (docs/cli.md#old-spellings: `create <label>` was its old spelling).
  keyOptions(remote(keys.command('add'), 'make an ingest key and print its DSN', 'cmi ingest-keys add --label "Billing service" --component billing', 'cmi ingest-keys add --label "Web app" --origins https://app.example.com --rate-limit 100'))
    .requiredOption('--label <label>', 'the key\'s name')
    .option('--disable', 'made disabled (refused until enabled)')
    .action(async (options: KeyFlags & { label: string }, command: Command) =>
      run(command, false, (c) => remoteIngestKeyCommands(c).create({ ...keyFields(options), label: options.label })));

  keyOptions(remote(keys.command('edit <id>'), 'change an ingest key', 'cmi ingest-keys edit 3 --disable', 'cmi ingest-keys edit 3 --rate-limit 60 --no-component'))
    .option('--label <label>', 'new label')
    .option('--no-component', 'no component of its own')
    .option('--enable', 'accept its events again')
    .option('--disable', 'refuse its events (403) until enabled')
    .action(async (id: string, options: Omit<KeyFlags, 'component'> & { component?: string | false }, command: Command) => {
      // Commander gives --no-component as component: false.
      const flags: KeyFlags = { ...options, component: options.component === false ? undefined : options.component, noComponent: options.component === false };
      return run(command, false, (c) => remoteIngestKeyCommands(c).edit(id, keyFields(flags)));
    });

  remote(keys.command('revoke <id>'), 'revoke an ingest key: refused at once by every server process', 'cmi ingest-keys revoke 3')
    .action(async (id: string, _options: unknown, command: Command) => run(command, false, (c) => remoteIngestKeyCommands(c).revoke(id)));
}
