import { systemClock } from '../../shared/clock.js';
import { generatePassword } from '../../users/passwords.js';
import type { User } from '../../shared/records.js';
import { OPERATOR } from '../../users/authorization.js';
import { unlockAccount } from '../../users/lockout.js';
import { usersService } from '../../users/users.service.js';
import type { Database } from '../../db/database.js';
import { loginFailuresRepository } from '../../users/login-failures.store.js';
import { usersRepository } from '../../users/users.store.js';

/**
 * `cmi local users ...`: the operator's account tools, straight on the database (safe while servers run; they
 * see a change within CMI_AUTH_CACHE_TTL). The operator may do anything an administrator may.
 */
export function userCommands(database: Database) {
  const users = usersService(usersRepository(database), systemClock);
  const failures = loginFailuresRepository(database);
  const describe = (user: User) => `${user.id} "${user.login}" <${user.email}>`;

  const resolve = (target: string) => users.lookUp(OPERATOR, target);

  return {
    async list(page: number, perPage: number): Promise<string> {
      const { items, total } = await users.list(OPERATOR, perPage, (page - 1) * perPage);
      const rows = items.map((u) => [String(u.id), u.login, u.email, u.role, u.status]);
      const table = [['ID', 'LOGIN', 'EMAIL', 'ROLE', 'STATUS'], ...rows];
      const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
      const lines = table.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd());
      return [...lines, `${items.length} of ${total} users (page ${page})`].join('\n');
    },

    async create(fields: Record<string, unknown>): Promise<string> {
      const user = await users.create(OPERATOR, fields);
      return `Created ${user.role === 'admin' ? 'administrator' : 'user'} ${describe(user)}`;
    },

    async update(target: string, fields: Record<string, unknown>): Promise<string> {
      const user = await users.update(OPERATOR, (await resolve(target)).id, fields);
      return `Updated user ${describe(user)}`;
    },

    async remove(target: string): Promise<string> {
      const user = await resolve(target);
      const outcome = await users.remove(OPERATOR, user.id);
      return outcome === 'marked'
        ? `Marked user ${describe(user)} deleted; its access has ended (rm again to remove the record)`
        : `Removed user ${describe(user)}`;
    },

    async suspend(target: string): Promise<string> {
      return `Suspended user ${describe(await users.suspend(OPERATOR, (await resolve(target)).id))}`;
    },

    async activate(target: string): Promise<string> {
      return `Activated user ${describe(await users.activate(OPERATOR, (await resolve(target)).id))}`;
    },

    async apiKey(target: string): Promise<string> {
      const { user, apiKey } = await users.makeNewApiKey(OPERATOR, (await resolve(target)).id);
      return `New API key for ${describe(user)} (shown once; the old one no longer works):\n${apiKey}`;
    },

    /** Clears the user's failed-login counters (docs/security.md#brute-force), so its next login is checked afresh. */
    async unlock(target: string): Promise<string> {
      const user = await resolve(target);
      await unlockAccount(failures, user);
      return `Unlocked user ${describe(user)}: its failed-login counters are cleared`;
    },

    /** Sets the given password, or a generated one that is printed once. All sessions end; the counters are cleared. */
    async resetPassword(target: string, password: string | undefined): Promise<string> {
      const chosen = password ?? generatePassword();
      const user = await users.update(OPERATOR, (await resolve(target)).id, { password: chosen });
      await unlockAccount(failures, user);
      return password === undefined
        ? `New password for ${describe(user)} (shown once): ${chosen}`
        : `Password of ${describe(user)} changed; its sessions have ended`;
    },
  };
}
