import { type Command, Option } from 'commander';
import type { CmiClient } from '../../client/index.js';
import { bucketId } from './buckets.js';
import { findGroup } from './groups.js';
import { roleIds } from './roles.js';

/** `--role` (repeatable), `--bucket` and `--group` of `cmi users add|edit`: what `userRoleFields` reads. */
export interface UserRoleFlags {
  role?: string[];
  /** A bucket's id or label; false for --no-bucket (edit). */
  bucket?: string | false;
  /** A user group's id, identifier or label; false for --no-group (edit). */
  group?: string | false;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * Adds `--role ROLE` (repeatable: the roles the user holds, replacing its own, by id, identifier or label)
 * `--bucket BUCKET` (by id or label) and `--group GROUP` (by id, identifier or label) to `cmi users add|edit`;
 * on edit, `--no-bucket` and `--no-group` too (docs/cli.md#roles-and-permissions).
 */
export function userRoleOptions(command: Command, edit: boolean): Command {
  command
    .addOption(new Option('--role <role>', `a role the user holds, by id, identifier or label (repeat for each${edit ? '; replaces the user\'s roles' : ''})`).argParser(collect).conflicts(['admin', 'ordinary']))
    .option('--bucket <bucket>', 'the billing bucket the user belongs to, by id or label')
    .option('--group <group>', 'the user group the user belongs to (its roles apply to the user too), by id, identifier or label');
  if (edit) command.option('--no-bucket', 'take the user out of its billing bucket').option('--no-group', 'take the user out of its user group');
  return command;
}

/** `role_ids`, `bucket_id` and `user_group_id` for the flags given, names looked up on the server (an id goes as given, for the server to check). */
export async function userRoleFields(client: CmiClient, flags: UserRoleFlags): Promise<{ role_ids?: number[]; bucket_id?: number | null; user_group_id?: number | null }> {
  const groupId = async (target: string) => (/^\d+$/.test(target) ? Number(target) : (await findGroup(client, target)).id);
  return {
    ...(flags.role === undefined ? {} : { role_ids: await roleIds(client, flags.role) }),
    ...(flags.bucket === undefined ? {} : { bucket_id: flags.bucket === false ? null : await bucketId(client, flags.bucket) }),
    ...(flags.group === undefined ? {} : { user_group_id: flags.group === false ? null : await groupId(flags.group) }),
  };
}
