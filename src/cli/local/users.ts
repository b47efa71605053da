import { type Command, Option } from 'commander';
import { systemClock } from '../../shared/clock.js';
import { generatePassword } from '../../users/passwords.js';
import type { User } from '../../users/user.js';
import { OPERATOR } from '../../roles/authorization.js';
import { unlockAccount } from '../../users/lockout.js';
import { usersService } from '../../users/users.service.js';
import { auditTrailOn } from '../../audit/audit-trail.js';
import { loadConfig } from '../../config.js';
import type { Database } from '../../db/database.js';
import { loginFailuresRepository } from '../../users/login-failures.store.js';
import { usersRepository } from '../../users/users.store.js';
import { userLimits } from '../../shared/limits.js';
import { passwordPolicyService } from '../../users/password-policy.service.js';
import { passwordPolicyRepository } from '../../users/password-policy.store.js';
import { generatedToFit } from '../../users/password-policy.js';
import { UsageError } from '../common/usage-error.js';
import { pages, readStdin, withDatabase } from './database.js';
import { human, type Output, table, write } from '../common/output.js';
import { cliEnv } from '../common/io.js';

/**
 * `cmi local users ...`: the operator's account tools, straight on the database (safe while servers run; they
 * see a change within CMI_AUTH_CACHE_TTL). The operator may do anything an administrator may.
 */
export function userCommands(database: Database) {
  const config = loadConfig(cliEnv());
  const audit = auditTrailOn(database, systemClock, config.auditRetentionDays);
  // New passwords are held to the stored password policy, as through the API (docs/security.md#password-policy).
  const policy = passwordPolicyService(passwordPolicyRepository(database), systemClock, audit, config.passwordPolicy, config);
  const users = usersService(usersRepository(database), systemClock, audit, undefined, undefined, undefined, policy.rules);
  const failures = loginFailuresRepository(database);
  const describe = (user: User) => `${user.id} "${user.login}" <${user.email}>`;

  const resolve = (target: string) => users.lookUp(OPERATOR, target);

  return {
    async list(page: number, perPage: number): Promise<Output> {
      const { items, total } = await users.list(OPERATOR, perPage, (page - 1) * perPage);
      const rows = items.map((u) => [String(u.id), u.login, u.email, u.role, u.status]);
      return human(...table([['ID', 'LOGIN', 'EMAIL', 'ROLE', 'STATUS'], ...rows]), `${items.length} of ${total} users (page ${page})`);
    },

    async create(fields: Record<string, unknown>): Promise<Output> {
      const user = await users.create(OPERATOR, fields);
      return human(`Created ${user.role === 'admin' ? 'administrator' : 'user'} ${describe(user)}`);
    },

    async update(target: string, fields: Record<string, unknown>): Promise<Output> {
      const user = await users.update(OPERATOR, (await resolve(target)).id, fields);
      return human(`Updated user ${describe(user)}`);
    },

    async remove(target: string): Promise<Output> {
      const user = await resolve(target);
      const outcome = await users.remove(OPERATOR, user.id);
      return human(outcome === 'marked'
        ? `Marked user ${describe(user)} deleted; its access has ended (rm again to remove the record)`
        : `Removed user ${describe(user)}`);
    },

    async suspend(target: string): Promise<Output> {
      return human(`Suspended user ${describe(await users.suspend(OPERATOR, (await resolve(target)).id))}`);
    },

    async activate(target: string): Promise<Output> {
      return human(`Activated user ${describe(await users.activate(OPERATOR, (await resolve(target)).id))}`);
    },

    async apiKey(target: string): Promise<Output> {
      const { user, apiKey } = await users.makeNewApiKey(OPERATOR, (await resolve(target)).id);
      return human(`New API key for ${describe(user)} (shown once; the old one no longer works):`, apiKey);
    },

    /** Clears the user's failed-login counters (docs/security.md#brute-force), so its next login is checked afresh. */
    async unlock(target: string): Promise<Output> {
      const user = await resolve(target);
      await unlockAccount(failures, user);
      await audit.record(OPERATOR, { action: 'user.unlock', target_type: 'user', target_id: user.id, changes: {} });
      return human(`Unlocked user ${describe(user)}: its failed-login counters are cleared`);
    },

    /** Sets the given password, or a generated one that is printed once. All sessions end; the counters are cleared. */
    async resetPassword(target: string, password: string | undefined): Promise<Output> {
      const chosen = password ?? generatedToFit((await policy.load(), policy.current()), generatePassword);
      const user = await users.update(OPERATOR, (await resolve(target)).id, { password: chosen });
      await unlockAccount(failures, user);
      return human(password === undefined
        ? `New password for ${describe(user)} (shown once): ${chosen}`
        : `Password of ${describe(user)} changed; its sessions have ended`);
    },
  };
}

async function passwordFrom(options: { password?: string; passwordStdin?: boolean }): Promise<string | undefined> {
  return options.passwordStdin ? readStdin() : options.password;
}

/** Options that set user fields, shared by add and edit. */
function userFieldOptions(command: Command): Command {
  return command
    .option('--first-name <name>', 'first name')
    .option('--last-name <name>', 'last name')
    .option('--time-zone <zone>', 'time zone, e.g. Europe/London')
    .option('--locale <locale>', 'locale, e.g. en');
}

type UserFieldOptions = { login?: string; email?: string; firstName?: string; lastName?: string; timeZone?: string; locale?: string; admin?: boolean; ordinary?: boolean };

function userFields(options: UserFieldOptions): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    login: options.login,
    email: options.email,
    first_name: options.firstName,
    last_name: options.lastName,
    time_zone: options.timeZone,
    locale: options.locale,
    role: options.admin ? 'admin' : options.ordinary ? 'user' : undefined,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** `cmi local users ...`: the users in the configured database, with the verbs of `cmi users` where both have one. */
export function addLocalUserCommands(local: Command): void {
  const users = local.command('users').description('manage users in the configured database (also without working credentials)');
  const onUsers = (run: (commands: ReturnType<typeof userCommands>) => Promise<Output>) => async () =>
    write(await withDatabase((database) => run(userCommands(database))));

  users
    .command('ls')
    .description('list users')
    .option('--page <n>', 'page', '1')
    .option('--per-page <n>', 'users a page', '100')
    .action(async (options: { page: string; perPage: string }) => {
      const { page, perPage } = pages(options);
      await onUsers((c) => c.list(page, perPage))();
    });

  userFieldOptions(
    users
      .command('add')
      .description('add a user')
      .requiredOption('--login <login>', 'login name')
      .requiredOption('--email <email>', 'email address')
      .addOption(new Option('--password <password>', `password (at least ${userLimits.passwordMinChars} characters)`).conflicts('passwordStdin'))
      .option('--password-stdin', 'read the password from standard input')
      .option('--admin', 'make the user an administrator'),
  ).action(async (options: UserFieldOptions & { password?: string; passwordStdin?: boolean }) => {
    const password = await passwordFrom(options);
    if (password === undefined) throw new UsageError('give --password or --password-stdin');
    await onUsers((c) => c.create({ ...userFields(options), password }))();
  });

  userFieldOptions(
    users
      .command('edit <user>')
      .description('change a user (by id, login or email)')
      .option('--login <login>', 'new login name')
      .option('--email <email>', 'new email address')
      .addOption(new Option('--admin', 'make the user an administrator').conflicts('ordinary'))
      .option('--ordinary', 'make the user an ordinary user'),
  ).action(async (target: string, options: UserFieldOptions) => onUsers((c) => c.update(target, userFields(options)))());

  users
    .command('rm <user>')
    .description('mark a user deleted (its access ends); rm again removes the record')
    .action(async (target: string) => onUsers((c) => c.remove(target))());
  users.command('suspend <user>').description('suspend a user (its access ends)').action(async (target: string) => onUsers((c) => c.suspend(target))());
  users.command('activate <user>').description('reactivate a suspended or deleted user').action(async (target: string) => onUsers((c) => c.activate(target))());
  users.command('api-key <user>').description('make a new API key (printed once; the old one stops working)').action(async (target: string) => onUsers((c) => c.apiKey(target))());
  users
    .command('unlock <user>')
    .description('clear the failed-login counters of the user\'s login and email (the lockout ends)')
    .action(async (target: string) => onUsers((c) => c.unlock(target))());
  users
    .command('reset-password <user>')
    .description('set a new password (a generated one, printed once, unless given); ends all sessions and the lockout')
    .addOption(new Option('--password <password>', 'the new password').conflicts('passwordStdin'))
    .option('--password-stdin', 'read the new password from standard input')
    .action(async (target: string, options: { password?: string; passwordStdin?: boolean }) => {
      const password = await passwordFrom(options);
      await onUsers((c) => c.resetPassword(target, password))();
    });
}
