import { type Command, Option } from 'commander';
import type { CmiClient } from '../../client/index.js';
import { bucketId } from './buckets.js';
import { roleIds } from './roles.js';

/** `--role` (repeatable) and `--bucket` of `cmi users add|edit`: what `userRoleFields` reads. */
export interface UserRoleFlags {
  role?: string[];
  /** A bucket's id or label; false for --no-bucket (edit). */
  bucket?: string | false;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * Adds `--role ROLE` (repeatable: the roles the user holds, replacing its own, by id, identifier or label)
 * and `--bucket BUCKET` (by id or label) to `cmi users add|edit`; on edit, `--no-bucket` too
 * (docs/cli.md#roles-and-permissions).
 */
export function userRoleOptions(command: Command, edit: boolean): Command {
  command
    .addOption(new Option('--role <role>', `a role the user holds, by id, identifier or label (repeat for each${edit ? '; replaces the user\'s roles' : ''})`).argParser(collect).conflicts(['admin', 'ordinary']))
    .option('--bucket <bucket>', 'the billing bucket the user belongs to, by id or label');
  if (edit) command.option('--no-bucket', 'take the user out of its billing bucket');
  return command;
}

/** `role_ids` and `bucket_id` for the flags given, names looked up on the server. */
export async function userRoleFields(client: CmiClient, flags: UserRoleFlags): Promise<{ role_ids?: number[]; bucket_id?: number | null }> {
  return {
    ...(flags.role === undefined ? {} : { role_ids: await roleIds(client, flags.role) }),
    ...(flags.bucket === undefined ? {} : { bucket_id: flags.bucket === false ? null : await bucketId(client, flags.bucket) }),
  };
}
