import cluster from 'node:cluster';
import { Command, Option } from 'commander';
import { ConfigError, loadConfig, SETTINGS, type Setting } from '../config.js';
import { ClientError } from '../shared/problems.js';
import { userLimits } from '../shared/limits.js';
import { type Database, migrateToLatest, openDatabase } from '../db/database.js';
import { deliveryCommands } from './local/deliveries.js';
import { errorCommands, type ErrorListOptions } from './local/errors.js';
import { serve } from './serve.js';
import { UsageError } from './usage-error.js';
import { userCommands } from './local/users.js';
import {
  addHelpCommand,
  addRemoteDeliveryCommands,
  addRemoteErrorCommands,
  addRemoteProgramCommands,
  addRemoteUserCommands,
  connectionOptions,
  remoteFailure,
} from './remote/commands.js';
import { addOldSpellings } from './old-spellings.js';

const settings = Object.entries(SETTINGS) as Array<[string, Setting]>;

/** Flags of `cmi serve`, each laid over the environment variable of the same meaning. */
const SERVE_FLAGS = settings.flatMap(([variable, setting]) => (setting.flag === undefined ? [] : [{ variable, ...setting, flag: setting.flag }]));

const withDefault = (setting: Setting) => (setting.default === undefined ? setting.help : `${setting.help} (default ${setting.default})`);

/** Every setting, its default and what it does, after `cmi serve --help`'s options. */
function environmentHelp(): string {
  const width = Math.max(...settings.map(([variable]) => variable.length));
  const lines = settings.map(([variable, setting]) => `  ${variable.padEnd(width)}  ${withDefault(setting)}`);
  return `\nEnvironment (a flag wins over its variable; see docs/operations.md):\n${lines.join('\n')}\n`;
}

function configWith(flags: Record<string, string | undefined>) {
  const overrides: Record<string, string> = {};
  for (const { flag, variable } of SERVE_FLAGS) {
    const key = flag.slice(2, flag.indexOf(' ')).replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    const value = flags[key];
    if (value !== undefined) overrides[variable] = value;
  }
  return loadConfig({ ...process.env, ...overrides });
}

async function withDatabase<T>(run: (database: Database) => Promise<T>): Promise<T> {
  const database = openDatabase(loadConfig());
  try {
    await migrateToLatest(database);
    return await run(database);
  } finally {
    await database.close();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

// Positional options: the program's --url/--user/... go before the command; remote commands take them after too
// (docs/cli.md#connecting), and `users update --user` keeps its own meaning.
const program = connectionOptions(new Command('cmi').description('Cloud-management API server, and a command line for it (docs/cli.md)').showHelpAfterError().enablePositionalOptions());

const serveCommand = program.command('serve').description('run the HTTP server');
for (const setting of SERVE_FLAGS) serveCommand.option(setting.flag, `${withDefault(setting)}; env ${setting.variable}`);
serveCommand.addHelpText('after', environmentHelp);
serveCommand.action((flags: Record<string, string>) => serve(configWith(flags)));

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(async () => {
    const database = openDatabase(loadConfig());
    try {
      const applied = await migrateToLatest(database);
      console.log(applied.length === 0 ? 'Database is up to date' : `Applied ${applied.join(', ')}`);
    } finally {
      await database.close();
    }
  });

const local = program.command('local').description('act on the configured database directly, as the operator (also without working credentials)');

/** `cmi local users ...`: the users in the configured database, with the verbs of `cmi users` where both have one. */
function defineLocalUsers(users: Command): void {
const onUsers = (run: (commands: ReturnType<typeof userCommands>) => Promise<string>) => async () =>
  console.log(await withDatabase((database) => run(userCommands(database))));

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

users
  .command('ls')
  .description('list users')
  .option('--page <n>', 'page', '1')
  .option('--per-page <n>', 'users a page', '100')
  .action(async (options: { page: string; perPage: string }) => {
    const page = Number(options.page);
    const perPage = Number(options.perPage);
    if (!Number.isInteger(page) || page < 1 || !Number.isInteger(perPage) || perPage < 1) throw new UsageError('--page and --per-page must be positive integers');
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

defineLocalUsers(local.command('users').description('manage users in the configured database (also without working credentials)'));
addRemoteUserCommands(program.command('users').description('manage users on a server (cmi local users: in the configured database)'));

/** `cmi local errors ...`: the error tracker in the configured database (see defineLocalUsers). */
function defineLocalErrors(errors: Command): void {
const onErrors = (run: (commands: ReturnType<typeof errorCommands>) => Promise<string>) => async () =>
  console.log(await withDatabase((database) => run(errorCommands(database, loadConfig()))));

errors
  .command('ls')
  .description('list errors, the latest seen first')
  .addOption(new Option('--reported', 'only errors marked reported').conflicts('unreported'))
  .option('--unreported', 'only errors not marked reported')
  .option('--class <class>', 'only errors of this exact class')
  .option('--since <datetime>', 'only errors seen at or after this time, e.g. 2026-11-20T10:00:00+00:00')
  .option('--json', 'print the JSON array the API answers')
  .option('--page <n>', 'page', '1')
  .option('--per-page <n>', 'errors a page', '100')
  .action(async (options: { reported?: boolean; unreported?: boolean; class?: string; since?: string; json?: boolean; page: string; perPage: string }) => {
    const page = Number(options.page);
    const perPage = Number(options.perPage);
    if (!Number.isInteger(page) || page < 1 || !Number.isInteger(perPage) || perPage < 1) throw new UsageError('--page and --per-page must be positive integers');
    const filters: ErrorListOptions = {
      reported: options.reported ? true : options.unreported ? false : undefined,
      errorClass: options.class,
      since: options.since,
    };
    await onErrors((c) => c.list(filters, page, perPage, options.json === true))();
  });
errors
  .command('show <id>')
  .description('print an error, its latest occurrences and the hosts it occurred on')
  .option('--json', 'print the record as the API answers it')
  .action(async (id: string, options: { json?: boolean }) => onErrors((c) => c.show(id, options.json === true))());
errors
  .command('report <id>')
  .description('mark an error reported, delivering it first to CMI_REPORT_WEBHOOK_URL when that is set')
  .action(async (id: string) => onErrors((c) => c.report(id))());
errors.command('rm <id>').description('delete an error and everything kept about it').action(async (id: string) => onErrors((c) => c.remove(id))());
errors
  .command('prune')
  .description('remove errors not seen for CMI_ERRORS_RETENTION_DAYS days and old hourly counts, now')
  .action(async () => onErrors((c) => c.prune())());
}

defineLocalErrors(local.command('errors').description('investigate and remove infrastructure errors in the configured database'));
addRemoteErrorCommands(program.command('errors').description('infrastructure errors on a server (cmi local errors: in the configured database)'));

/** `cmi local deliveries ...`: the webhook deliveries in the configured database. */
function defineLocalDeliveries(deliveries: Command): void {

const onDeliveries = (run: (commands: ReturnType<typeof deliveryCommands>) => Promise<string>) => async () =>
  console.log(await withDatabase((database) => run(deliveryCommands(database, loadConfig()))));

deliveries
  .command('ls')
  .description('list deliveries, the oldest first')
  .option('--state <state>', 'only pending, failed or delivered ones')
  .option('--json', 'print the JSON array the API answers')
  .option('--page <n>', 'page', '1')
  .option('--per-page <n>', 'deliveries a page', '100')
  .action(async (options: { state?: string; json?: boolean; page: string; perPage: string }) => {
    const page = Number(options.page);
    const perPage = Number(options.perPage);
    if (!Number.isInteger(page) || page < 1 || !Number.isInteger(perPage) || perPage < 1) throw new UsageError('--page and --per-page must be positive integers');
    await onDeliveries((c) => c.list(options.state, page, perPage, options.json === true))();
  });
deliveries
  .command('retry <id>')
  .description('send a delivery again (same id and body), now, from a running cmi serve')
  .action(async (id: string) => onDeliveries((c) => c.retry(id))());
}

defineLocalDeliveries(local.command('deliveries').description('the webhook deliveries (reports and alerts) in the configured database'));
addRemoteDeliveryCommands(program.command('deliveries').description('webhook deliveries on a server (cmi local deliveries: in the configured database)'));
addRemoteProgramCommands(program);
addOldSpellings(program);
addHelpCommand(program);

try {
  await program.parseAsync();
} catch (error) {
  const remote = remoteFailure(error);
  if (remote !== undefined) {
    for (const line of remote.lines) console.error(line);
    process.exitCode = remote.code;
  } else if (error instanceof ConfigError || error instanceof UsageError) {
    console.error(`cmi: ${error.message}`);
  } else if (error instanceof ClientError) {
    for (const [field, messages] of Object.entries(error.messages)) {
      for (const message of messages) console.error(`cmi: ${field === 'base' ? '' : `${field} `}${message}`);
    }
  } else {
    console.error(`cmi: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exitCode ||= 1;
  // A worker's IPC channel would keep it alive; its primary learns of the failure from the exit.
  if (cluster.isWorker) process.exit(1);
}
