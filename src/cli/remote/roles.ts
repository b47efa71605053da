import type { Command } from 'commander';
import type { CmiClient, Permission, RoleChanges, RoleRecord } from '../../client/index.js';
import { permissionResource, roleResource } from '../../roles/role.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { datetime, fieldLines, listOutput, type ListOptions, pick } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, table } from '../common/output.js';

const describe = (role: RoleRecord) => `${role.id} "${role.identifier}" (${role.label})`;
const yesNo = (value: boolean) => (value ? 'yes' : 'no');
const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The role a command names: an id, else an identifier, else a label (docs/cli.md#roles-and-permissions). */
export async function findRole(client: CmiClient, target: string): Promise<RoleRecord> {
  if (/^\d+$/.test(target)) return client.roles.get(Number(target));
  return pick(client.roles.all({ perPage: 1000 }), target, 'role', (role) => role.identifier);
}

/**
 * The ids of the roles `targets` name, each an id (sent as it is: the server refuses one no role has)
 * or an identifier or label, looked up in one walk of the list.
 */
export async function roleIds(client: CmiClient, targets: readonly string[]): Promise<number[]> {
  const named = targets.filter((target) => !/^\d+$/.test(target));
  const roles: RoleRecord[] = [];
  if (named.length > 0) for await (const role of client.roles.all({ perPage: 1000 })) roles.push(role);
  const ids: number[] = [];
  for (const target of targets) ids.push(/^\d+$/.test(target) ? Number(target) : (await pick(roles, target, 'role', (role) => role.identifier)).id);
  return ids;
}

/** The ids of the permissions `targets` name, each an id or an identifier (`users.read`). */
async function permissionIds(client: CmiClient, targets: readonly string[]): Promise<number[]> {
  const catalogue = new Map<string, number>();
  if (targets.some((target) => !/^\d+$/.test(target))) for await (const p of client.permissions.all({ perPage: 1000 })) catalogue.set(p.identifier, p.id);
  return targets.map((target) => {
    if (/^\d+$/.test(target)) return Number(target);
    const id = catalogue.get(target);
    if (id === undefined) throw new RemoteUsageError(`no permission "${target}" (give an id or an identifier: cmi permissions ls lists them)`);
    return id;
  });
}

const permissionTable = (permissions: readonly Permission[], indent = ''): Line[] =>
  table([['ID', 'IDENTIFIER', 'LABEL'], ...permissions.map((p) => [String(p.id), cell(p.identifier), cell(p.label)])], undefined, indent);

export interface RoleFlags {
  label?: string;
  identifier?: string;
  permission?: string[];
  grant?: string[];
  revoke?: string[];
  /** `yes` or `no`: whether holders must have a second factor (docs/security.md#second-factor). */
  requiresTwoFactor?: string;
}

/** --requires-two-factor's yes or no. */
function yesOrNo(value: string): boolean {
  if (value === 'yes') return true;
  if (value === 'no') return false;
  throw new RemoteUsageError(`--requires-two-factor takes yes or no, not "${value}"`);
}

/** `cmi roles ls|show|add|edit|rm|clone` and `cmi permissions ls` against a server. */
export function remoteRoleCommands({ client }: Connection) {
  const roleTable = (roles: RoleRecord[]): Line[] =>
    table([['ID', 'IDENTIFIER', 'LABEL', 'SYSTEM', 'USERS', 'PERMISSIONS'], ...roles.map((r) => [
      String(r.id), cell(r.identifier), cell(r.label), yesNo(r.system), String(r.users_count), String(r.permissions.length),
    ])]);

  return {
    ls(options: ListOptions, raw: RawFormat): Promise<Output> {
      return listOutput(client.roles, options, raw, { resource: roleResource, noun: 'roles', table: roleTable });
    },

    async show(target: string, raw: RawFormat): Promise<Output> {
      const role = await findRole(client, target);
      if (raw) return rendered(raw, { resource: roleResource, record: role });
      return human(
        ...fieldLines([
          ['id', String(role.id)], ['label', role.label], ['identifier', role.identifier], ['system', yesNo(role.system)],
          ['requires_two_factor', yesNo(role.requires_two_factor)], ['users_count', String(role.users_count)], ['created_at', datetime(role.created_at)], ['updated_at', datetime(role.updated_at)],
        ]),
        '',
        `Permissions (${role.permissions.length}):`,
        ...(role.permissions.length === 0 ? ['  none'] : permissionTable(role.permissions, '  ')),
      );
    },

    async add(flags: RoleFlags): Promise<Output> {
      if (flags.label === undefined) throw new RemoteUsageError('give the new role\'s --label');
      const role = await client.roles.create({
        label: flags.label,
        ...(flags.identifier === undefined ? {} : { identifier: flags.identifier }),
        ...(flags.permission === undefined ? {} : { permission_ids: await permissionIds(client, flags.permission) }),
        ...(flags.requiresTwoFactor === undefined ? {} : { requires_two_factor: yesOrNo(flags.requiresTwoFactor) }),
      });
      return human(`Created role ${describe(role)} with ${role.permissions.length} permissions`);
    },

    /** --permission replaces the role's permissions; --grant and --revoke add to and take from them. */
    async edit(target: string, flags: RoleFlags): Promise<Output> {
      if (Object.values(flags).every((value) => value === undefined)) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help roles edit)');
      const role = await findRole(client, target);
      const changes: RoleChanges = {};
      if (flags.label !== undefined) changes.label = flags.label;
      if (flags.identifier !== undefined) changes.identifier = flags.identifier;
      if (flags.requiresTwoFactor !== undefined) changes.requires_two_factor = yesOrNo(flags.requiresTwoFactor);
      if (flags.permission !== undefined || flags.grant !== undefined || flags.revoke !== undefined) {
        const ids = new Set(flags.permission === undefined ? role.permissions.map((p) => p.id) : await permissionIds(client, flags.permission));
        for (const id of await permissionIds(client, flags.grant ?? [])) ids.add(id);
        for (const id of await permissionIds(client, flags.revoke ?? [])) ids.delete(id);
        changes.permission_ids = [...ids].sort((a, b) => a - b);
      }
      await client.roles.update(role.id, changes);
      const changed = await client.roles.get(role.id);
      return human(`Updated role ${describe(changed)}, ${changed.permissions.length} permissions`);
    },

    async rm(target: string): Promise<Output> {
      const role = await findRole(client, target);
      await client.roles.delete(role.id);
      return human(`Deleted role ${describe(role)}`);
    },

    async clone(target: string): Promise<Output> {
      const source = await findRole(client, target);
      const role = await client.roles.clone(source.id);
      return human(`Created role ${describe(role)} from role ${describe(source)}, with its ${role.permissions.length} permissions`);
    },

    /** The whole catalogue, every page. */
    async permissions(raw: RawFormat): Promise<Output> {
      const permissions: Permission[] = [];
      for await (const permission of client.permissions.all({ perPage: 1000 })) permissions.push(permission);
      if (raw) return rendered(raw, { resource: permissionResource, records: permissions });
      return human(...permissionTable(permissions), `${permissions.length} permissions`);
    },
  };
}

type RawFlags = { json?: boolean; xml?: boolean };

/** `cmi roles ls|show|add|edit|rm|clone` and `cmi permissions ls`. */
export function addRemoteRoleCommands(program: Command): void {
  const roles = program.command('roles').description('manage roles (named sets of permissions that users hold) on a server');
  rawOptions(remote(roles.command('ls'), 'list roles on the server (a page, or --all)', 'cmi roles ls', 'cmi roles ls --all --json'))
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'roles a page (default the server\'s, 25)')
    .option('--all', 'every page')
    .action(async (options: ListOptions & RawFlags, command: Command) => run(command, options.xml, (c) => remoteRoleCommands(c).ls(options, rawFormat(options))));

  rawOptions(remote(roles.command('show <role>'), 'print a role and its permissions (by id, identifier or label)', 'cmi roles show admin', 'cmi roles show 3 --json'))
    .action(async (target: string, options: RawFlags, command: Command) => run(command, options.xml, (c) => remoteRoleCommands(c).show(target, rawFormat(options))));

  remote(roles.command('add'), 'create a role on the server', 'cmi roles add --label "Error readers" --permission infrastructure_errors.read --permission 25')
    .requiredOption('--label <label>', 'the role\'s name')
    .option('--identifier <identifier>', 'lower-case letters, digits and _ . - (default: made from the label)')
    .option('--permission <permission>', 'a permission it grants, by id or identifier (repeat for each)', collect)
    .option('--requires-two-factor <yes|no>', 'whether its holders must have a second factor (default: no)')
    .action(async (options: RoleFlags, command: Command) => run(command, false, (c) => remoteRoleCommands(c).add(options)));

  remote(roles.command('edit <role>'), 'change a role on the server (by id, identifier or label)', 'cmi roles edit support --grant users.suspend --revoke users.delete', 'cmi roles edit 3 --label Support --permission users.read')
    .option('--label <label>', 'new name')
    .option('--identifier <identifier>', 'new identifier (not of a system role)')
    .option('--permission <permission>', 'the permissions it grants, replacing its own: by id or identifier (repeat for each)', collect)
    .option('--grant <permission>', 'grant one more permission (repeatable)', collect)
    .option('--revoke <permission>', 'take a permission away (repeatable)', collect)
    .option('--requires-two-factor <yes|no>', 'whether its holders must have a second factor')
    .action(async (target: string, options: RoleFlags, command: Command) => run(command, false, (c) => remoteRoleCommands(c).edit(target, options)));

  remote(roles.command('rm <role>'), 'delete a role on the server (not a system role, nor one that users hold)', 'cmi roles rm support')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteRoleCommands(c).rm(target)));

  remote(roles.command('clone <role>'), 'copy a role on the server: its label with " (copy)", its identifier with _copy, its permissions', 'cmi roles clone support')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteRoleCommands(c).clone(target)));

  const permissions = program.command('permissions').description('the permission catalogue of a server (what roles grant)');
  rawOptions(remote(permissions.command('ls'), 'list every permission on the server, by id', 'cmi permissions ls', 'cmi permissions ls --json'))
    .action(async (options: RawFlags, command: Command) => run(command, options.xml, (c) => remoteRoleCommands(c).permissions(rawFormat(options))));
}
