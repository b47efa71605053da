import { may } from '../roles/authorization.js';
import { ClientError } from '../shared/problems.js';
import type { User } from '../users/user.js';
import type { UsersService } from '../users/users.service.js';
import { html, type Html } from './html.js';

/** Accounts read to find who may be assigned errors (docs/console.md#triage): past these, assign by the API or the CLI. */
const PEOPLE_READ = 500;
const PEOPLE_PAGE = 100;
/** Other users an error's page names (its notes' authors, its activity's actors). */
const PEOPLE_NAMED = 50;

/** Logins by user id: the people an error may be assigned to, as far as the viewer may see users. */
export type People = ReadonlyMap<number, string>;

/**
 * The users the viewer may see (all with users.read, itself with users.read.own) who may be
 * assigned errors: not deleted, and holding infrastructure_errors.read. The pickers offer them and
 * the lists show their logins; anyone else is shown by id.
 */
export async function assignablePeople(users: UsersService, viewer: User): Promise<People> {
  const people = new Map<number, string>();
  const assignable = (user: User) => user.status !== 'deleted' && user.permissions.has('infrastructure_errors.read');
  if (may(viewer, 'users.read')) {
    for (let offset = 0; offset < PEOPLE_READ; offset += PEOPLE_PAGE) {
      const { items, total } = await users.list(viewer, PEOPLE_PAGE, offset, {});
      for (const user of items) if (assignable(user)) people.set(user.id, user.login);
      if (items.length === 0 || offset + items.length >= total) break;
    }
  }
  // The viewer, wherever it is in the list (or when it may see no one else).
  if (!people.has(viewer.id) && assignable(viewer)) people.set(viewer.id, viewer.login);
  return people;
}

/**
 * `people` with the logins of `ids` it lacks (a note's author or an actor who may no longer be
 * assigned errors), read one by one when the viewer may see users: a page names people, and shows
 * ids only in links (docs/console.md#one-error). At most `PEOPLE_NAMED` are read.
 */
export async function withNamesOf(users: UsersService, viewer: User, people: People, ids: Iterable<number | null>): Promise<People> {
  const missing = [...new Set(ids)].filter((id): id is number => id !== null && !people.has(id) && id !== viewer.id).slice(0, PEOPLE_NAMED);
  if (missing.length === 0 || !may(viewer, 'users.read')) return people;
  const named = new Map(people);
  for (const id of missing) {
    const user = await users.get(viewer, id).catch((error: unknown) => {
      if (error instanceof ClientError) return undefined; // gone: shown by id
      throw error;
    });
    if (user) named.set(id, user.login);
  }
  return named;
}

/**
 * Who a user id is on a page: its login when known, else its id. No one is `nobody`: "cmi" for an
 * activity's actor (the system, or the operator at the command line), "(no user)" for a note's author.
 */
export function personName(people: People, id: number | null, viewer: User, nobody = 'cmi'): Html {
  if (id === null) return html`<span class="muted">${nobody}</span>`;
  const login = people.get(id) ?? (id === viewer.id ? viewer.login : undefined);
  return login === undefined ? html`user #${id}` : html`${login}`;
}
