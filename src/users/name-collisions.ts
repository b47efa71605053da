import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { settingsRepository } from '../db/settings.store.js';

/**
 * Set once a scan found no collision: cmi refuses to make one since (a unique index of lower(login),
 * and the users service's checks), so the scan, which reads every login and email (seconds on a
 * million users, docs/benchmarks.md#start), is not run again at every start.
 */
const NONE_FOUND = 'users.name_collisions_none';

/** One name (in lower case) that is the login or email of more than one account, and their ids. */
export interface NameCollision {
  name: string;
  ids: number[];
}

/**
 * Names that are the login or email of more than one account, in any case
 * (docs/security.md#one-name-one-account). cmi refuses to make such a pair now; an older
 * database may hold some. They are reported, never resolved here: which account keeps the name is
 * the operator's choice. One scan of the users, at start-up.
 */
export async function nameCollisions(database: Database): Promise<NameCollision[]> {
  const { rows } = await sql<{ name: string; id: number | string }>`
    with names as (
      select lower(login) as name, id from users
      union select email as name, id from users
    ), shared as (
      select name from names group by name having count(distinct id) > 1
    )
    select name, id from names where name in (select name from shared) order by name, id`.execute(database.db);
  const byName = new Map<string, number[]>();
  for (const row of rows) {
    const ids = byName.get(row.name) ?? [];
    ids.push(Number(row.id));
    byName.set(row.name, ids);
  }
  return [...byName].map(([name, ids]) => ({ name, ids }));
}

/**
 * Tells `warn` of every collision, one line each, with what to do; nothing when there is none. The
 * scan runs until one finds none (NONE_FOUND); a failure to note that is left for the next start.
 */
export async function reportNameCollisions(database: Database, warn: (line: string) => void): Promise<void> {
  const settings = settingsRepository(database);
  if ((await settings.get(NONE_FOUND)) !== undefined) return;
  const collisions = await nameCollisions(database);
  if (collisions.length === 0) await settings.put(NONE_FOUND, new Date().toISOString()).catch(() => {});
  for (const { name, ids } of collisions) {
    warn(
      `cmi: warning: ${JSON.stringify(name)} is the login or email of users ${ids.join(' and ')} (in some case): ` +
      'it signs in to neither and the command line takes only their ids; give one of them another login or email (cmi users ...)',
    );
  }
}
