import type { CmiClient } from '../../client/index.js';
import { CmiNotFoundError } from '../../client/index.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { findUser } from './users.js';

/**
 * People named where people type them, and printed by name (docs/cli.md#names): a user is given by id,
 * login or email (`me`: the login the command connects as), and printed by login.
 */

/** The id of the user `target` names: an id as it is (the server refuses one no user has), `me`, or a login or email looked up. */
export async function userIdOf({ client, login }: Connection, target: string, option: string): Promise<number> {
  if (/^[1-9]\d{0,9}$/.test(target)) return Number(target);
  if (target === '') throw new RemoteUsageError(`${option} needs a user: a login, an email, an id or me`);
  return (await findUser(client, target === 'me' ? login : target)).id;
}

/**
 * The logins of the users `ids` name, each asked for once; a user the server no longer has (deleted,
 * or not to be read) prints as its id.
 */
export async function loginsOf(client: CmiClient, ids: Iterable<number | null>): Promise<(id: number | null) => string> {
  const wanted = [...new Set([...ids].filter((id): id is number => id !== null))];
  const logins = new Map<number, string>();
  await Promise.all(wanted.map(async (id) => {
    try {
      logins.set(id, (await client.users.get(id)).login);
    } catch (error) {
      if (!(error instanceof CmiNotFoundError)) throw error;
    }
  }));
  return (id) => (id === null ? '-' : logins.get(id) ?? `user ${id}`);
}
