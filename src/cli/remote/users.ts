import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import type { CmiClient, NewUser, User, UserChanges, UserFilters } from '../../client/index.js';
import { findGroup } from './groups.js';
import { roleIds } from './roles.js';
import { CmiApiError } from '../../client/index.js';
import { userResource } from '../../users/user.resource.js';
import { globals, rawFormat, rawOptions, remote, run } from './command.js';
import { connect, type Connection, EXIT, RemoteUsageError } from './connection.js';
import { positive } from './listing.js';
import { readCsv, toCsv } from './csv.js';
import { type RawFormat, rendered } from './records-output.js';
import { type UserRoleFlags, userRoleFields, userRoleOptions } from './user-roles.js';
import { cell, exact, human, type Line, type Output, progressBar, styled, table, write } from '../common/output.js';
import { chooseExitCode, fromCwd } from '../common/io.js';

const role = (user: User) => user.roles[0]?.identifier ?? '-';
/** Every role the user holds, for people (the table, show). */
const roles = (user: User) => user.roles.map((r) => r.identifier).join(',') || '-';
const describe = (user: User) => `${user.id} "${user.login}" <${user.email}>`;
const STATUS_STYLE = { active: 'green', suspended: 'yellow', deleted: 'red' } as const;


/** The user a command names: an id, or a login or email looked up in the list (docs/cli.md#users). */
export async function findUser(client: CmiClient, target: string): Promise<User> {
  if (/^\d+$/.test(target)) return client.users.get(Number(target));
  const wanted = target.toLowerCase();
  // `q` narrows the walk to users whose login, email or name holds the text; the match is exact here.
  const found: User[] = [];
  for await (const user of client.users.all({ q: target, perPage: 1000 })) {
    if (user.login === target) return user;
    if (user.email.toLowerCase() === wanted || user.login.toLowerCase() === wanted) found.push(user);
  }
  if (found.length === 1) return found[0]!;
  if (found.length > 1) throw new RemoteUsageError(`"${target}" names ${found.length} users (ids ${found.map((u) => u.id).join(', ')}): give the login or the id`);
  throw new RemoteUsageError(`no user "${target}" (give an id, a login or an email)`);
}

/** `cmi users ls|show|add|edit|rm|suspend|activate|api-key|import|export` against a server. */
export function remoteUserCommands({ client }: Connection) {
  const userTable = (users: User[]): Line[] =>
    table([['ID', 'LOGIN', 'EMAIL', 'ROLE', 'STATUS'], ...users.map((u) => [String(u.id), cell(u.login), cell(u.email), cell(roles(u)), u.status])], (row, column) =>
      column === 4 ? STATUS_STYLE[users[row]!.status as keyof typeof STATUS_STYLE] : undefined,
    );

  /** Every user, with a progress bar on a terminal. */
  async function everyUser(perPage: number | undefined, filters: UserFilters = {}): Promise<User[]> {
    const bar = progressBar('users');
    const users: User[] = [];
    let total: number | undefined;
    try {
      const first = await client.users.list({ ...filters, perPage, page: 1 });
      total = first.total;
      bar.update(0, total);
      for await (const user of client.users.all({ ...filters, perPage: first.limit })) {
        users.push(user);
        bar.update(users.length, Math.max(total, users.length));
      }
    } finally {
      bar.done();
    }
    return users;
  }

  return {
    async ls(options: { page?: string; perPage?: string; all?: boolean } & UserListFlags, raw: RawFormat): Promise<Output> {
      const page = positive(options.page, '--page');
      const perPage = positive(options.perPage, '--per-page');
      if (options.all && page !== undefined) throw new RemoteUsageError('--all walks every page: leave out --page');
      const filters = await userFilters(client, options);
      if (options.all) {
        const users = await everyUser(perPage, filters);
        if (raw) return rendered(raw, { resource: userResource, records: users });
        return human(...userTable(users), `${users.length} users`);
      }
      const result = await client.users.list({ ...filters, page, perPage });
      if (raw) return rendered(raw, { resource: userResource, records: result.items });
      const pages = Math.max(1, Math.ceil(result.total / result.limit));
      return human(...userTable(result.items), `${result.items.length} of ${result.total} users (page ${result.page} of ${pages})`);
    },

    async show(target: string, raw: RawFormat): Promise<Output> {
      const user = await findUser(client, target);
      if (raw) return rendered(raw, { resource: userResource, record: user });
      const value = (v: string | number | Date | null) => (v === null ? '-' : v instanceof Date ? `${v.toISOString().slice(0, 19)}+00:00` : String(v));
      const lines = userResource.fields
        .filter(([name]) => name !== 'roles' && name !== 'api_key')
        .map(([name]) => [name, value((user as unknown as Record<string, string | number | Date | null>)[name]!)]);
      lines.splice(6, 0, ['role', roles(user)]);
      const width = Math.max(...lines.map(([name]) => name!.length));
      return human(...lines.map(([name, text]): Line => [styled('bold', `${name}:`.padEnd(width + 1)), ` ${text}`]));
    },

    async add(fields: NewUser): Promise<Output> {
      const user = await client.users.create(fields);
      return human(`Created ${role(user) === 'admin' ? 'administrator' : 'user'} ${describe(user)}`);
    },

    async edit(target: string, changes: UserChanges): Promise<Output> {
      if (Object.keys(changes).length === 0) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help users edit)');
      const user = await findUser(client, target);
      await client.users.update(user.id, changes);
      return human(`Updated user ${describe({ ...user, ...changes })}`);
    },

    async rm(target: string): Promise<Output> {
      const user = await findUser(client, target);
      await client.users.delete(user.id);
      return human(user.status === 'deleted'
        ? `Removed user ${describe(user)}`
        : `Marked user ${describe(user)} deleted; its access has ended (rm again to remove the record)`);
    },

    async suspend(target: string): Promise<Output> {
      return human(`Suspended user ${describe(await client.users.suspend((await findUser(client, target)).id))}`);
    },

    async activate(target: string): Promise<Output> {
      return human(`Activated user ${describe(await client.users.activate((await findUser(client, target)).id))}`);
    },

    async apiKey(target: string): Promise<Output> {
      const user = await client.users.makeNewApiKey((await findUser(client, target)).id);
      return human(`New API key for ${describe(user)} (shown once; the old one no longer works):`, user.api_key);
    },

    /** Every user as RFC 4180 CSV, the columns `import` reads (without passwords); `role` holds every role's identifier, space-separated. */
    async export(): Promise<Output> {
      const users = await everyUser(1000);
      const rows = users.map((u) => [String(u.id), u.login, u.email, u.first_name, u.last_name, u.roles.map((r) => r.identifier).join(' '), u.status, u.time_zone ?? '', u.locale ?? '', `${u.created_at.toISOString().slice(0, 19)}+00:00`]);
      return exact(toCsv([['id', 'login', 'email', 'first_name', 'last_name', 'role', 'status', 'time_zone', 'locale', 'created_at'], ...rows]), '');
    },

    /**
     * Creates a user per row (columns login, email, password, and optionally first_name, last_name,
     * time_zone, locale, role: role identifiers or ids, space-separated), `concurrency` at a time. A login
     * the server already has is skipped, so a rerun after an interruption creates no duplicates. The
     * report lists what was skipped and failed.
     */
    async import(file: string, concurrency: number): Promise<{ output: Output; failed: number }> {
      let text: string;
      try {
        text = readFileSync(fromCwd(file), 'utf8');
      } catch (error) {
        throw new RemoteUsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      let rows: ReturnType<typeof readCsv>;
      try {
        rows = readCsv(text);
      } catch (error) {
        throw new RemoteUsageError(`${file} is not CSV: ${(error as Error).message}`);
      }
      if (rows.length > 0 && !('login' in rows[0]!.fields && 'email' in rows[0]!.fields)) throw new RemoteUsageError(`${file} needs a header row with login and email columns`);
      const existing = new Set((await everyUser(1000)).map((u) => u.login.toLowerCase()));
      // Role names are read once: a row's `role` column names one or more roles, as `export` writes them.
      const roleByIdentifier = new Map<string, number>();
      if (rows.some(({ fields }) => (fields.role ?? '').trim() !== '')) for await (const r of client.roles.all({ perPage: 1000 })) roleByIdentifier.set(r.identifier, r.id);
      const bar = progressBar('import');
      const created: string[] = [];
      const skipped: string[] = [];
      const failed: string[] = [];
      let done = 0;
      let next = 0;
      const KNOWN = ['login', 'email', 'password', 'first_name', 'last_name', 'time_zone', 'locale', 'role'];
      async function worker(): Promise<void> {
        while (next < rows.length) {
          const { line, fields } = rows[next++]!;
          const login = fields.login ?? '';
          try {
            if (existing.has(login.toLowerCase())) {
              skipped.push(`line ${line}: ${login}: login already exists`);
              continue;
            }
            const unknown = Object.keys(fields).filter((name) => !KNOWN.includes(name));
            if (unknown.length > 0) {
              failed.push(`line ${line}: ${login}: unknown column ${unknown.join(', ')}`);
              continue;
            }
            const { role: roleColumn = '', ...rest } = fields;
            const named = roleColumn.split(/\s+/).filter((name) => name !== '');
            const unknownRoles = named.filter((name) => !/^\d+$/.test(name) && !roleByIdentifier.has(name));
            if (unknownRoles.length > 0) {
              failed.push(`line ${line}: ${login}: no role ${unknownRoles.map((name) => `"${name}"`).join(', ')} (cmi roles ls lists them)`);
              continue;
            }
            const body = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== '')) as unknown as NewUser;
            if (named.length > 0) body.role_ids = named.map((name) => (/^\d+$/.test(name) ? Number(name) : roleByIdentifier.get(name)!));
            await client.users.create(body);
            existing.add(login.toLowerCase());
            created.push(login);
          } catch (error) {
            if (!(error instanceof CmiApiError) || error.status !== 422) throw error;
            const taken = error.errors.login?.some((message) => message === 'has already been taken');
            const reason = Object.entries(error.errors).flatMap(([field, list]) => list.map((m) => (field === 'base' ? m : `${field} ${m}`))).join('; ');
            if (taken && Object.keys(error.errors).length === 1) skipped.push(`line ${line}: ${login}: login already exists`);
            else failed.push(`line ${line}: ${login || '(no login)'}: ${reason}`);
          } finally {
            bar.update(++done, rows.length);
          }
        }
      }
      try {
        await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(rows.length, 1)) }, worker));
      } finally {
        bar.done();
      }
      const byLine = (a: string, b: string) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0]);
      const output = human(
        `${created.length} created, ${skipped.length} skipped, ${failed.length} failed (${rows.length} rows)`,
        ...skipped.sort(byLine).map((s) => `skipped ${s}`),
        ...failed.sort(byLine).map((f): Line => [styled('red', `failed ${f}`)]),
      );
      return { output, failed: failed.length };
    },
  };
}

type UserListFlags = { q?: string; status?: string; role?: string; group?: string };

/** The users list's filters (docs/cli.md#users): `--group` by id, identifier or label. */
async function userFilters(client: CmiClient, options: UserListFlags): Promise<UserFilters> {
  const filters: UserFilters = {};
  if (options.q !== undefined) filters.q = options.q;
  if (options.status !== undefined) filters.status = options.status as UserFilters['status'];
  if (options.role !== undefined) filters.role_id = (await roleIds(client, [options.role]))[0]!;
  if (options.group !== undefined) filters.user_group_id = (await findGroup(client, options.group)).id;
  return filters;
}

type UserFieldFlags = { login?: string; email?: string; password?: string; firstName?: string; lastName?: string; timeZone?: string; locale?: string; admin?: boolean; ordinary?: boolean };

function userFields(options: UserFieldFlags): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    login: options.login, email: options.email, password: options.password, first_name: options.firstName, last_name: options.lastName,
    time_zone: options.timeZone, locale: options.locale, role: options.admin ? 'admin' : options.ordinary ? 'user' : undefined,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

function userFieldOptions(command: Command): Command {
  return command
    .option('--first-name <name>', 'first name')
    .option('--last-name <name>', 'last name')
    .option('--time-zone <zone>', 'time zone, e.g. Europe/London')
    .option('--locale <locale>', 'locale, e.g. en')
    .option('--password <password>', 'the password (visible to other local users in the process list; prefer import from a 0600 file)');
}

/** `cmi users ls|show|add|edit|rm|suspend|activate|api-key|import|export`. */
export function addRemoteUserCommands(program: Command): void {
  const users = program.command('users').description('manage users on a server (cmi local users: in the configured database)');
  rawOptions(remote(users.command('ls'), 'list users on the server (a page, or --all)', 'cmi users ls --url https://cmi.example.com --user admin', 'cmi users ls --all --json'))
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'users a page (default the server\'s, 25)')
    .option('--all', 'every page (a progress bar on a terminal)')
    .option('--q <text>', 'only users whose login, email, first or last name holds this text, in any case')
    .addOption(new Option('--status <status>', 'only users of this status').choices(['active', 'suspended', 'deleted']))
    .option('--role <role>', 'only users holding this role (by identifier, label or id)')
    .option('--group <group>', 'only members of this user group (id, identifier or label)')
    .action(async (options: { page?: string; perPage?: string; all?: boolean; json?: boolean; xml?: boolean } & UserListFlags, command: Command) =>
      run(command, options.xml, (c) => remoteUserCommands(c).ls(options, rawFormat(options))));

  rawOptions(remote(users.command('show <user>'), 'print a user (by id, login or email)', 'cmi users show 3', 'cmi users show alice --xml'))
    .action(async (target: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteUserCommands(c).show(target, rawFormat(options))));

  userRoleOptions(userFieldOptions(remote(users.command('add'), 'create a user on the server', 'cmi users add --login grace --email grace@example.com --password "$PW" --first-name Grace', 'cmi users add --login kim --email kim@example.com --password "$PW" --role user --role support --bucket Gold', 'cmi users add --login lee --email lee@example.com --password "$PW" --group ops'))
    .requiredOption('--login <login>', 'login name')
    .requiredOption('--email <email>', 'email address')
    .addOption(new Option('--admin', 'make the user an administrator')), false)
    .action(async (options: UserFieldFlags & UserRoleFlags, command: Command) => {
      if (options.password === undefined) throw new RemoteUsageError('give the new user\'s --password');
      return run(command, false, async (c) => remoteUserCommands(c).add({ ...userFields(options), ...(await userRoleFields(c.client, options)) } as never));
    });

  userRoleOptions(userFieldOptions(remote(users.command('edit <user>'), 'change a user on the server (by id, login or email)', 'cmi users edit alice --time-zone Europe/Paris', 'cmi users edit 3 --admin', 'cmi users edit kim --role support --no-bucket', 'cmi users edit kim --group ops'))
    .option('--login <login>', 'new login name')
    .option('--email <email>', 'new email address')
    .addOption(new Option('--admin', 'make the user an administrator').conflicts('ordinary'))
    .option('--ordinary', 'make the user an ordinary user'), true)
    .action(async (target: string, options: UserFieldFlags & UserRoleFlags, command: Command) =>
      run(command, false, async (c) => remoteUserCommands(c).edit(target, { ...userFields(options), ...(await userRoleFields(c.client, options)) })));

  remote(users.command('rm <user>'), 'mark a user deleted on the server (its access ends); rm again removes the record', 'cmi users rm bob')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteUserCommands(c).rm(target)));

  remote(users.command('suspend <user>'), 'suspend a user on the server (its access ends)', 'cmi users suspend bob')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteUserCommands(c).suspend(target)));

  remote(users.command('activate <user>'), 'reactivate a suspended or deleted user on the server', 'cmi users activate bob')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteUserCommands(c).activate(target)));

  remote(users.command('api-key <user>'), 'make a user a new API key on the server (printed once; the old one stops working)', 'cmi users api-key bob')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteUserCommands(c).apiKey(target)));

  remote(users.command('import <file>'), 'create the users of a CSV file (columns login, email, password, first_name, last_name, time_zone, locale, role); existing logins are skipped', 'cmi users import staff.csv --concurrency 8')
    .option('--concurrency <n>', 'requests at a time (1 to 32)', '4')
    .action(async (file: string, options: { concurrency: string }, command: Command) => {
      const concurrency = Number(options.concurrency);
      if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32) throw new RemoteUsageError(`--concurrency must be 1 to 32 (got "${options.concurrency}")`);
      const connection = await connect(globals(command));
      const { output, failed } = await remoteUserCommands(connection).import(file, concurrency);
      write(output);
      if (failed > 0) chooseExitCode(EXIT.refused);
    });

  remote(users.command('export'), 'print every user as CSV (RFC 4180; no passwords)', 'cmi users export > users.csv')
    .action(async (_options: unknown, command: Command) => {
      // CSV as it is, CRLF line ends included.
      write(await remoteUserCommands(await connect(globals(command))).export());
    });
}
