import { readFileSync } from 'node:fs';
import type { CmiClient, NewUser, User, UserChanges } from '../../client/index.js';
import { CmiApiError } from '../../client/index.js';
import { userResource } from '../../users/user.resource.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { readCsv, toCsv } from './csv.js';
import { rendered } from './records-output.js';
import { cell, paint, progressBar, table, type Terminal } from './terminal.js';

export type RawFormat = 'json' | 'xml' | undefined;

const role = (user: User) => user.roles[0]?.identifier ?? '-';
const describe = (user: User) => `${user.id} "${user.login}" <${user.email}>`;
const STATUS_STYLE = { active: 'green', suspended: 'yellow', deleted: 'red' } as const;

function positive(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9]\d{0,5}$/.test(raw)) throw new RemoteUsageError(`${name} must be a positive integer (got "${raw}")`);
  return Number(raw);
}

/** The user a command names: an id, or a login or email looked up in the list (docs/cli.md#users). */
export async function findUser(client: CmiClient, target: string): Promise<User> {
  if (/^\d+$/.test(target)) return client.users.get(Number(target));
  const wanted = target.toLowerCase();
  for await (const user of client.users.all({ perPage: 1000 })) {
    if (user.login === target || user.email === wanted) return user;
  }
  throw new RemoteUsageError(`no user "${target}" (give an id, a login or an email)`);
}

/** `cmi users ls|show|add|edit|rm|suspend|activate|api-key|import|export` against a server. */
export function remoteUserCommands({ client }: Connection, term: Terminal) {
  const userTable = (users: User[]) =>
    table(term, [['ID', 'LOGIN', 'EMAIL', 'ROLE', 'STATUS'], ...users.map((u) => [String(u.id), cell(u.login), cell(u.email), role(u), u.status])], (row, column) =>
      column === 4 ? STATUS_STYLE[users[row]!.status as keyof typeof STATUS_STYLE] : undefined,
    );

  /** Every user, with a progress bar on a terminal. */
  async function everyUser(perPage: number | undefined): Promise<User[]> {
    const bar = progressBar(term, 'users');
    const users: User[] = [];
    let total: number | undefined;
    try {
      const first = await client.users.list({ perPage, page: 1 });
      total = first.total;
      bar.update(0, total);
      for await (const user of client.users.all({ perPage: first.limit })) {
        users.push(user);
        bar.update(users.length, Math.max(total, users.length));
      }
    } finally {
      bar.done();
    }
    return users;
  }

  return {
    async ls(options: { page?: string; perPage?: string; all?: boolean }, raw: RawFormat): Promise<string> {
      const page = positive(options.page, '--page');
      const perPage = positive(options.perPage, '--per-page');
      if (options.all && page !== undefined) throw new RemoteUsageError('--all walks every page: leave out --page');
      if (options.all) {
        const users = await everyUser(perPage);
        if (raw) return rendered(raw, { resource: userResource, records: users });
        return [...userTable(users), `${users.length} users`].join('\n');
      }
      const result = await client.users.list({ page, perPage });
      if (raw) return rendered(raw, { resource: userResource, records: result.items });
      const pages = Math.max(1, Math.ceil(result.total / result.limit));
      return [...userTable(result.items), `${result.items.length} of ${result.total} users (page ${result.page} of ${pages})`].join('\n');
    },

    async show(target: string, raw: RawFormat): Promise<string> {
      const user = await findUser(client, target);
      if (raw) return rendered(raw, { resource: userResource, record: user });
      const value = (v: string | number | Date | null) => (v === null ? '-' : v instanceof Date ? `${v.toISOString().slice(0, 19)}+00:00` : String(v));
      const lines = userResource.fields
        .filter(([name]) => name !== 'roles' && name !== 'api_key')
        .map(([name]) => [name, value((user as unknown as Record<string, string | number | Date | null>)[name]!)]);
      lines.splice(6, 0, ['role', role(user)]);
      const width = Math.max(...lines.map(([name]) => name!.length));
      return lines.map(([name, text]) => `${paint(term, 'bold', `${name}:`.padEnd(width + 1))} ${text}`).join('\n');
    },

    async add(fields: NewUser): Promise<string> {
      const user = await client.users.create(fields);
      return `Created ${role(user) === 'admin' ? 'administrator' : 'user'} ${describe(user)}`;
    },

    async edit(target: string, changes: UserChanges): Promise<string> {
      if (Object.keys(changes).length === 0) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help users edit)');
      const user = await findUser(client, target);
      await client.users.update(user.id, changes);
      return `Updated user ${describe({ ...user, ...changes })}`;
    },

    async rm(target: string): Promise<string> {
      const user = await findUser(client, target);
      await client.users.delete(user.id);
      return user.status === 'deleted'
        ? `Removed user ${describe(user)}`
        : `Marked user ${describe(user)} deleted; its access has ended (rm again to remove the record)`;
    },

    async suspend(target: string): Promise<string> {
      return `Suspended user ${describe(await client.users.suspend((await findUser(client, target)).id))}`;
    },

    async activate(target: string): Promise<string> {
      return `Activated user ${describe(await client.users.activate((await findUser(client, target)).id))}`;
    },

    async apiKey(target: string): Promise<string> {
      const user = await client.users.makeNewApiKey((await findUser(client, target)).id);
      return `New API key for ${describe(user)} (shown once; the old one no longer works):\n${user.api_key}`;
    },

    /** Every user as RFC 4180 CSV, the columns `import` reads (without passwords). */
    async export(): Promise<string> {
      const users = await everyUser(1000);
      const rows = users.map((u) => [String(u.id), u.login, u.email, u.first_name, u.last_name, role(u), u.status, u.time_zone ?? '', u.locale ?? '', `${u.created_at.toISOString().slice(0, 19)}+00:00`]);
      return toCsv([['id', 'login', 'email', 'first_name', 'last_name', 'role', 'status', 'time_zone', 'locale', 'created_at'], ...rows]);
    },

    /**
     * Creates a user per row (columns login, email, password, and optionally first_name, last_name,
     * time_zone, locale, role), `concurrency` at a time. A login the server already has is skipped, so a
     * rerun after an interruption creates no duplicates. The report lists what was skipped and failed.
     */
    async import(file: string, concurrency: number): Promise<{ output: string; failed: number }> {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
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
      const bar = progressBar(term, 'import');
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
            const body = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== '')) as unknown as NewUser;
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
      const lines = [
        `${created.length} created, ${skipped.length} skipped, ${failed.length} failed (${rows.length} rows)`,
        ...skipped.sort(byLine).map((s) => `skipped ${s}`),
        ...failed.sort(byLine).map((f) => paint(term, 'red', `failed ${f}`)),
      ];
      return { output: lines.join('\n'), failed: failed.length };
    },
  };
}
