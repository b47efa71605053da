import type { Command } from 'commander';
import { type CmiClient, CmiNotFoundError, type NewUserGroup, type UserGroup, type UserGroupChanges } from '../../client/index.js';
import { bucketId } from './buckets.js';
import { roleIds } from './roles.js';
import { userGroupResource } from '../../user-groups/user-group.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { positive } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, styled, table } from '../common/output.js';

const describe = (group: Pick<UserGroup, 'id' | 'label' | 'identifier'>) => `${group.id} "${group.label}" (${group.identifier})`;
const roleList = (group: UserGroup) => (group.roles.length === 0 ? '-' : group.roles.map((role) => role.identifier).join(', '));
/** The record as the renderer takes it: `additional_fields` as its JSON text, as the server holds it. */
const asRendered = (group: UserGroup) => ({ ...group, additional_fields: JSON.stringify(group.additional_fields) });


/** The group a command names: an id, or an identifier or label looked up in the list (docs/cli.md#user-groups). */
export async function findGroup(client: CmiClient, target: string): Promise<UserGroup> {
  if (/^\d+$/.test(target)) return client.userGroups.get(Number(target));
  const found: UserGroup[] = [];
  for await (const group of client.userGroups.all({ perPage: 1000 })) {
    if (group.identifier === target || group.label === target) found.push(group);
  }
  const byIdentifier = found.find((group) => group.identifier === target);
  if (byIdentifier) return byIdentifier;
  if (found.length > 1) throw new RemoteUsageError(`"${target}" is the label of more than one group (ids ${found.map((g) => g.id).join(', ')}): give the id`);
  if (found[0]) return found[0];
  throw new RemoteUsageError(`no user group "${target}" (give an id, an identifier or a label)`);
}

/** `--roles triager,support` (ids, identifiers or labels; `--roles ''` none) as role_ids, names looked up on the server. */
async function roleIdsOf(client: CmiClient, raw: string | undefined): Promise<number[] | undefined> {
  if (raw === undefined) return undefined;
  if (raw.trim() === '') return [];
  const targets = raw.split(',').map((target) => target.trim());
  if (targets.some((target) => target === '')) throw new RemoteUsageError(`--roles must be roles separated by commas (got "${raw}")`);
  return roleIds(client, targets);
}

/** `--bucket Gold` (an id or a label; `--bucket none`: no bucket) as bucket_id. */
async function bucketIdOf(client: CmiClient, raw: string | undefined): Promise<number | null | undefined> {
  if (raw === undefined) return undefined;
  if (raw === 'none') return null;
  return bucketId(client, raw);
}

type GroupFlags = { label?: string; identifier?: string; roles?: string; bucket?: string };

async function groupFields(client: CmiClient, options: GroupFlags): Promise<UserGroupChanges> {
  const fields: Record<string, unknown> = { label: options.label, identifier: options.identifier, role_ids: await roleIdsOf(client, options.roles), bucket_id: await bucketIdOf(client, options.bucket) };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** The labels of the buckets `ids` name, each asked for once; one the server no longer has prints as its id. */
async function bucketLabels(client: CmiClient, ids: Iterable<number | null>): Promise<(id: number | null) => string> {
  const labels = new Map<number, string>();
  await Promise.all([...new Set([...ids].filter((id): id is number => id !== null))].map(async (id) => {
    try {
      labels.set(id, (await client.buckets.get(id)).label);
    } catch (error) {
      if (!(error instanceof CmiNotFoundError)) throw error;
    }
  }));
  return (id) => (id === null ? '-' : labels.get(id) ?? `bucket ${id}`);
}

/** `cmi groups ls|show|add|edit|rm` against a server. */
export function remoteGroupCommands({ client }: Connection) {
  const groupTable = async (groups: UserGroup[]): Promise<Line[]> => {
    const bucket = await bucketLabels(client, groups.map((g) => g.bucket_id));
    return table([['ID', 'LABEL', 'IDENTIFIER', 'ROLES', 'BUCKET'], ...groups.map((g) => [String(g.id), cell(g.label), cell(g.identifier), cell(roleList(g)), cell(bucket(g.bucket_id))])]);
  };

  return {
    async ls(options: { page?: string; perPage?: string }, raw: RawFormat): Promise<Output> {
      const result = await client.userGroups.list({ page: positive(options.page, '--page'), perPage: positive(options.perPage, '--per-page') });
      if (raw) return rendered(raw, { resource: userGroupResource, records: result.items.map(asRendered) });
      const pages = Math.max(1, Math.ceil(result.total / result.limit));
      return human(...await groupTable(result.items), `${result.items.length} of ${result.total} user groups (page ${result.page} of ${pages})`);
    },

    async show(target: string, raw: RawFormat): Promise<Output> {
      const group = await findGroup(client, target);
      if (raw) return rendered(raw, { resource: userGroupResource, record: asRendered(group) });
      const [members, bucket] = await Promise.all([client.userGroups.users(group.id, { perPage: 1 }), bucketLabels(client, [group.bucket_id])]);
      const lines: Array<[string, string]> = [
        ['id', String(group.id)], ['label', cell(group.label)], ['identifier', cell(group.identifier)], ['roles', cell(roleList(group))],
        ['bucket', cell(bucket(group.bucket_id))], ['users', String(members.total)],
        ['created_at', `${group.created_at.toISOString().slice(0, 19)}+00:00`], ['updated_at', `${group.updated_at.toISOString().slice(0, 19)}+00:00`],
      ];
      const width = Math.max(...lines.map(([name]) => name.length));
      return human(...lines.map(([name, text]): Line => [styled('bold', `${name}:`.padEnd(width + 1)), ` ${text}`]));
    },

    async add(flags: GroupFlags): Promise<Output> {
      return human(`Created user group ${describe(await client.userGroups.create(await groupFields(client, flags) as NewUserGroup))}`);
    },

    async edit(target: string, flags: GroupFlags): Promise<Output> {
      const changes = await groupFields(client, flags);
      if (Object.keys(changes).length === 0) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help groups edit)');
      const group = await findGroup(client, target);
      await client.userGroups.update(group.id, changes);
      return human(`Updated user group ${describe(await client.userGroups.get(group.id))}`);
    },

    async rm(target: string): Promise<Output> {
      const group = await findGroup(client, target);
      await client.userGroups.delete(group.id);
      return human(`Deleted user group ${describe(group)}`);
    },
  };
}

/** `cmi groups ls|show|add|edit|rm` (docs/cli.md#user-groups). */
export function addRemoteGroupCommands(program: Command): void {
  const groups = program.command('groups').description('manage user groups on a server (their roles apply to their members)');
  rawOptions(remote(groups.command('ls'), 'list user groups on the server', 'cmi groups ls', 'cmi groups ls --json'))
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'groups a page (default the server\'s, 25)')
    .action(async (options: { page?: string; perPage?: string; json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteGroupCommands(c).ls(options, rawFormat(options))));

  rawOptions(remote(groups.command('show <group>'), 'print a user group (by id, identifier or label) and how many users it has', 'cmi groups show 2', 'cmi groups show resellers --xml'))
    .action(async (target: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteGroupCommands(c).show(target, rawFormat(options))));

  const fieldOptions = (command: Command) => command
    .option('--identifier <identifier>', 'identifier (default: made from the label)')
    .option('--roles <roles>', 'the roles the group holds, comma-separated ids, identifiers or labels (replacing its roles; "" for none)')
    .option('--bucket <bucket>', 'the billing bucket, by label or id, or none');

  fieldOptions(remote(groups.command('add'), 'create a user group on the server', 'cmi groups add --label Resellers --roles triager,support --bucket Gold'))
    .requiredOption('--label <label>', 'label')
    .action(async (options: GroupFlags, command: Command) => run(command, false, (c) => remoteGroupCommands(c).add(options)));

  fieldOptions(remote(groups.command('edit <group>'), 'change a user group on the server (by id, identifier or label)', 'cmi groups edit resellers --roles 3', 'cmi groups edit 2 --label "Resellers EU" --bucket none'))
    .option('--label <label>', 'new label')
    .action(async (target: string, options: GroupFlags, command: Command) => run(command, false, (c) => remoteGroupCommands(c).edit(target, options)));

  remote(groups.command('rm <group>'), 'delete a user group on the server (refused while users belong to it)', 'cmi groups rm resellers')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteGroupCommands(c).rm(target)));
}
