import { type Command, CommanderError, Option } from 'commander';
import { CmiApiError, CmiConnectionError, CmiError } from '../../client/index.js';
import { UsageError } from '../usage-error.js';
import { connect, EXIT, type GlobalOptions, RemoteUsageError } from './connection.js';
import { remoteDeliveryCommands } from './deliveries.js';
import { remoteErrorCommands } from './errors.js';
import { profilePath, saveProfile } from './profiles.js';
import { terminal } from './terminal.js';
import { findUser, type RawFormat, remoteUserCommands } from './users.js';

/**
 * The remote commands of `cmi` (docs/cli.md): they talk to a cmi (or OnApp) server over HTTP with the
 * client of src/client/, where the commands of `cmi local ...` act on the configured database.
 */

/** --url, --user, --password-stdin, --profile, --timeout: on the program (before the command) and on each remote command. */
export function connectionOptions(command: Command): Command {
  return command
    .option('--url <url>', 'the server, e.g. https://cmi.example.com (env CMI_URL)')
    .option('--user <login>', 'log in as this login or email (env CMI_USER)')
    .option('--password-stdin', 'read the password from standard input (else env CMI_PASSWORD or CMI_API_KEY, or the profile)')
    .option('--profile <name>', 'a profile saved by cmi login (env CMI_PROFILE; default: the first saved)')
    .option('--timeout <seconds>', 'give up on a request after this long (default 30)');
}

/** The connection options given to the program and to the command, the command's winning. */
export function globals(command: Command): GlobalOptions {
  const own = command.opts<GlobalOptions>();
  const program = (command.parent?.parent ?? command.parent)?.opts<GlobalOptions>() ?? {};
  return { ...program, ...Object.fromEntries(Object.entries(own).filter(([, v]) => v !== undefined)) };
}

/** Usage mistakes of a remote command exit 2 (docs/cli.md#exit-codes); --help exits 0. */
function exitsTwoOnUsage(command: Command): Command {
  return command.exitOverride((error: CommanderError) => {
    process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
  });
}

function rawOptions(command: Command): Command {
  return command
    .addOption(new Option('--json', 'print the JSON body instead of a table').conflicts('xml'))
    .option('--xml', 'talk XML to the server and print the XML body');
}

const rawFormat = (options: { json?: boolean; xml?: boolean }): RawFormat => (options.json ? 'json' : options.xml ? 'xml' : undefined);

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}`;

function remote(command: Command, description: string, ...example: string[]): Command {
  return exitsTwoOnUsage(connectionOptions(command.description(description)).addHelpText('after', examples(...example)));
}

/** Runs a remote command: connects with the options, prints what `run` answers. */
async function run(command: Command, xml: boolean | undefined, body: (connection: Awaited<ReturnType<typeof connect>>) => Promise<string>): Promise<void> {
  const connection = await connect({ ...globals(command), xml });
  console.log(await body(connection));
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
export function addRemoteUserCommands(users: Command): void {
  const term = terminal;
  rawOptions(remote(users.command('ls'), 'list users on the server (a page, or --all)', 'cmi users ls --url https://cmi.example.com --user admin', 'cmi users ls --all --json'))
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'users a page (default the server\'s, 25)')
    .option('--all', 'every page (a progress bar on a terminal)')
    .action(async (options: { page?: string; perPage?: string; all?: boolean; json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteUserCommands(c, term()).ls(options, rawFormat(options))));

  rawOptions(remote(users.command('show <user>'), 'print a user (by id, login or email)', 'cmi users show 3', 'cmi users show alice --xml'))
    .action(async (target: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteUserCommands(c, term()).show(target, rawFormat(options))));

  userFieldOptions(remote(users.command('add'), 'create a user on the server', 'cmi users add --login grace --email grace@example.com --password "$PW" --first-name Grace'))
    .requiredOption('--login <login>', 'login name')
    .requiredOption('--email <email>', 'email address')
    .addOption(new Option('--admin', 'make the user an administrator'))
    .action(async (options: UserFieldFlags, command: Command) => {
      if (options.password === undefined) throw new RemoteUsageError('give the new user\'s --password');
      return run(command, false, (c) => remoteUserCommands(c, term()).add(userFields(options) as never));
    });

  userFieldOptions(remote(users.command('edit <user>'), 'change a user on the server (by id, login or email)', 'cmi users edit alice --time-zone Europe/Paris', 'cmi users edit 3 --admin'))
    .option('--login <login>', 'new login name')
    .option('--email <email>', 'new email address')
    .addOption(new Option('--admin', 'make the user an administrator').conflicts('ordinary'))
    .option('--ordinary', 'make the user an ordinary user')
    .action(async (target: string, options: UserFieldFlags, command: Command) => run(command, false, (c) => remoteUserCommands(c, term()).edit(target, userFields(options))));

  remote(users.command('rm <user>'), 'mark a user deleted on the server (its access ends); rm again removes the record', 'cmi users rm bob')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteUserCommands(c, term()).rm(target)));

  remote(users.command('suspend <user>'), 'suspend a user on the server (its access ends)', 'cmi users suspend bob')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteUserCommands(c, term()).suspend(target)));

  remote(users.command('activate <user>'), 'reactivate a suspended or deleted user on the server', 'cmi users activate bob')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteUserCommands(c, term()).activate(target)));

  remote(users.command('api-key <user>'), 'make a user a new API key on the server (printed once; the old one stops working)', 'cmi users api-key bob')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteUserCommands(c, term()).apiKey(target)));

  remote(users.command('import <file>'), 'create the users of a CSV file (columns login, email, password, first_name, last_name, time_zone, locale, role); existing logins are skipped', 'cmi users import staff.csv --concurrency 8')
    .option('--concurrency <n>', 'requests at a time (1 to 32)', '4')
    .action(async (file: string, options: { concurrency: string }, command: Command) => {
      const concurrency = Number(options.concurrency);
      if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32) throw new RemoteUsageError(`--concurrency must be 1 to 32 (got "${options.concurrency}")`);
      const connection = await connect(globals(command));
      const { output, failed } = await remoteUserCommands(connection, term()).import(file, concurrency);
      console.log(output);
      if (failed > 0) process.exitCode = EXIT.refused;
    });

  remote(users.command('export'), 'print every user as CSV (RFC 4180; no passwords)', 'cmi users export > users.csv')
    .action(async (_options: unknown, command: Command) => {
      // CSV as it is, CRLF line ends included (console.log would add an LF).
      process.stdout.write(await remoteUserCommands(await connect(globals(command)), term()).export());
    });
}

type ErrorFlags = { reported?: boolean; unreported?: boolean; class?: string; q?: string; since?: string; until?: string; host?: string; component?: string; sort?: string; direction?: string; page?: string; perPage?: string; all?: boolean; json?: boolean; xml?: boolean };

/** `cmi errors ls|show|report|rm|histogram`. */
export function addRemoteErrorCommands(errors: Command): void {
  rawOptions(remote(errors.command('ls'), 'list infrastructure errors on the server, the latest seen first', 'cmi errors ls --unreported --host hv-01', 'cmi errors ls --all --since 2026-11-20T00:00:00Z'))
    .addOption(new Option('--reported', 'only errors marked reported').conflicts('unreported'))
    .option('--unreported', 'only errors not marked reported')
    .option('--class <class>', 'only errors of this exact class')
    .option('--q <text>', 'class or message contains the text')
    .option('--since <datetime>', 'seen at or after')
    .option('--until <datetime>', 'seen at or before')
    .option('--host <host>', 'with an occurrence on this host')
    .option('--component <component>', 'with an occurrence in this component')
    .option('--sort <field>', 'updated_at (default), created_at or counter')
    .option('--direction <direction>', 'desc (default) or asc')
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'errors a page')
    .option('--all', 'every page (a progress bar on a terminal)')
    .action(async (options: ErrorFlags, command: Command) => {
      const number = (raw: string | undefined, name: string) => {
        if (raw === undefined) return undefined;
        if (!/^[1-9]\d{0,5}$/.test(raw)) throw new RemoteUsageError(`${name} must be a positive integer (got "${raw}")`);
        return Number(raw);
      };
      const params = {
        reported: options.reported ? true : options.unreported ? false : undefined,
        error_class: options.class, q: options.q, since: options.since, until: options.until, host: options.host, component: options.component,
        sort: options.sort as never, direction: options.direction as never, page: number(options.page, '--page'), perPage: number(options.perPage, '--per-page'),
      };
      await run(command, options.xml, (c) => remoteErrorCommands(c, terminal()).ls(params, options.all === true, rawFormat(options)));
    });

  rawOptions(remote(errors.command('show <id>'), 'print an error on the server, its latest occurrences and the hosts it occurred on', 'cmi errors show 7', 'cmi errors show 7 --xml'))
    .action(async (id: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteErrorCommands(c, terminal()).show(id, rawFormat(options))));

  remote(errors.command('report <id>'), 'mark an error reported on the server, which delivers it first to its report webhook when one is set', 'cmi errors report 7')
    .action(async (id: string, _options: unknown, command: Command) => run(command, false, (c) => remoteErrorCommands(c, terminal()).report(id)));

  remote(errors.command('rm <id>'), 'delete an error on the server and everything kept about it', 'cmi errors rm 7')
    .action(async (id: string, _options: unknown, command: Command) => run(command, false, (c) => remoteErrorCommands(c, terminal()).rm(id)));

  rawOptions(remote(errors.command('histogram <id>'), 'print the occurrences of an error over time', 'cmi errors histogram 7 --period 7d'))
    .option('--period <period>', '24h (default), 7d or 30d')
    .action(async (id: string, options: { period?: string; json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteErrorCommands(c, terminal()).histogram(id, options.period, rawFormat(options))));
}

/** `cmi deliveries ls`: the server's webhook deliveries (there is no endpoint to retry one: `cmi local deliveries retry`). */
export function addRemoteDeliveryCommands(deliveries: Command): void {
  rawOptions(remote(deliveries.command('ls'), 'list the webhook deliveries (reports and alerts) on the server, the oldest first', 'cmi deliveries ls --state failed', 'cmi deliveries ls --all --json'))
    .option('--state <state>', 'only pending, failed or delivered ones')
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'deliveries a page')
    .option('--all', 'every page (a progress bar on a terminal)')
    .action(async (options: { state?: string; page?: string; perPage?: string; all?: boolean; json?: boolean; xml?: boolean }, command: Command) => {
      const number = (raw: string | undefined, name: string) => {
        if (raw === undefined) return undefined;
        if (!/^[1-9]\d{0,5}$/.test(raw)) throw new RemoteUsageError(`${name} must be a positive integer (got "${raw}")`);
        return Number(raw);
      };
      const params = { state: options.state, page: number(options.page, '--page'), perPage: number(options.perPage, '--per-page') };
      await run(command, options.xml, (c) => remoteDeliveryCommands(c, terminal()).ls(params, options.all === true, rawFormat(options)));
    });
}

/** `cmi version` and `cmi login`. */
export function addRemoteProgramCommands(program: Command): void {
  rawOptions(remote(program.command('version'), 'print the server\'s API version (and check the credentials)', 'cmi version --url https://cmi.example.com --user admin --password-stdin < pw.txt'))
    .action(async (options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, async ({ client }) => {
        const version = await client.version();
        if (options.json) return JSON.stringify({ version });
        if (options.xml) return `<?xml version="1.0" encoding="UTF-8"?>\n<cmi>\n  <version>${version.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</version>\n</cmi>`;
        return version;
      }));

  remote(
    program.command('login'),
    'save a profile (URL, login and an API key, never the password) so later commands need no credentials. With a password it makes the user a new API key, which replaces the previous one; with CMI_API_KEY it saves that key',
    'cmi login --url https://cmi.example.com --user admin --password-stdin < pw.txt',
    'CMI_API_KEY=... cmi login --url https://panel.example.com --user ops --profile panel',
  ).action(async (_options: unknown, command: Command) => {
    const options = globals(command);
    if (options.url === undefined && (process.env.CMI_URL ?? '') === '') throw new RemoteUsageError('give --url URL');
    if (options.user === undefined && (process.env.CMI_USER ?? '') === '') throw new RemoteUsageError('give --user LOGIN');
    const name = options.profile ?? 'default';
    // The profile being written is not read for credentials.
    const { client, url, login } = await connect(options, process.env, 'ignore');
    await client.version();
    let apiKey = process.env.CMI_API_KEY;
    let made = false;
    if (options.passwordStdin || (process.env.CMI_PASSWORD ?? '') !== '' || apiKey === undefined || apiKey === '') {
      const me = await findUser(client, login);
      apiKey = (await client.users.makeNewApiKey(me.id)).api_key;
      made = true;
    }
    const path = saveProfile(name, { url, login, api_key: apiKey }, process.env);
    console.log(`Saved profile "${name}" (${login} at ${url}) in ${path}${made ? '; a new API key was made for it (the previous key of this user no longer works)' : ''}`);
  });
}

/** What the program's catch prints for an error of a remote command, and the exit code; undefined for others. */
export function remoteFailure(error: unknown): { lines: string[]; code: number } | undefined {
  if (error instanceof RemoteUsageError) return { lines: [`cmi: ${error.message}`], code: EXIT.usage };
  if (error instanceof CmiApiError) {
    const lines = Object.entries(error.errors).flatMap(([field, list]) => list.map((m) => `cmi: ${field === 'base' ? '' : `${field} `}${m}`));
    if (lines.length === 0) lines.push(`cmi: the server answered ${error.status}`);
    if (error.status >= 500 && error.requestId !== undefined && !lines.some((line) => line.includes(error.requestId!))) lines.push(`cmi: request id ${error.requestId}`);
    if (error.retryAfter !== undefined) lines.push(`cmi: try again in ${error.retryAfter} s`);
    return { lines, code: EXIT.refused };
  }
  if (error instanceof CmiConnectionError) return { lines: [`cmi: ${error.message}`], code: EXIT.unreachable };
  if (error instanceof CmiError) return { lines: [`cmi: ${error.message}`], code: EXIT.refused };
  if (error instanceof UsageError && 'exitCode' in error) return { lines: [`cmi: ${error.message}`], code: EXIT.usage };
  return undefined;
}

export { profilePath };

/** `cmi help <command> [<subcommand>]`: the help of any command, however deep (`cmi help users ls`). */
export function addHelpCommand(program: Command): void {
  program.helpCommand(false);
  program
    .command('help [command...]')
    .description('show the help of a command, e.g. cmi help users ls')
    .action((names: string[]) => {
      let target = program;
      for (const name of names) {
        const next = target.commands.find((command) => command.name() === name || command.aliases().includes(name));
        if (next === undefined) throw new RemoteUsageError(`no command "${names.join(' ')}" (cmi help lists them)`);
        target = next;
      }
      target.outputHelp();
    });
}
