import { Command, Option } from 'commander';
import { ConfigError, loadConfig } from '../config.js';
import { ClientError } from '../domain/errors.js';
import { type Database, migrateToLatest, openDatabase, type PoolSettings } from '../store/database.js';
import { serve } from './serve.js';
import { createUserCommand } from './users.js';

/** Flags of `cmi serve`, each laid over the environment variable of the same meaning. */
const SERVE_FLAGS: Array<[flag: string, variable: string, description: string]> = [
  ['--port <port>', 'PORT', 'port to listen on (default 3000)'],
  ['--host <host>', 'HOST', 'address to listen on (default 127.0.0.1)'],
  ['--database-url <url>', 'DATABASE_URL', 'database (default sqlite:./data/cmi.sqlite3)'],
  ['--default-per-page <n>', 'CMI_DEFAULT_PER_PAGE', 'list page size when none is asked for (default 25)'],
  ['--max-per-page <n>', 'CMI_MAX_PER_PAGE', 'largest per_page accepted (default 1000)'],
  ['--log-level <level>', 'LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent (default info)'],
];

function configWith(flags: Record<string, string | undefined>) {
  const overrides: Record<string, string> = {};
  for (const [flag, variable] of SERVE_FLAGS) {
    const key = flag.slice(2, flag.indexOf(' ')).replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    const value = flags[key];
    if (value !== undefined) overrides[variable] = value;
  }
  return loadConfig({ ...process.env, ...overrides });
}

function databaseSettings(): [string, PoolSettings] {
  const config = loadConfig();
  return [config.databaseUrl, config.pool];
}

async function withDatabase<T>(run: (database: Database) => Promise<T>): Promise<T> {
  const database = openDatabase(...databaseSettings());
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

const program = new Command('cmi').description('Cloud-management API server').showHelpAfterError();

const serveCommand = program.command('serve').description('run the HTTP server');
for (const [flag, variable, description] of SERVE_FLAGS) serveCommand.option(flag, `${description}; env ${variable}`);
serveCommand.action((flags: Record<string, string>) => serve(configWith(flags)));

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(async () => {
    const database = openDatabase(...databaseSettings());
    try {
      const applied = await migrateToLatest(database);
      console.log(applied.length === 0 ? 'Database is up to date' : `Applied ${applied.join(', ')}`);
    } finally {
      await database.close();
    }
  });

const users = program.command('users').description('manage users in the configured database');
users
  .command('create')
  .description('add a user')
  .requiredOption('--login <login>', 'login name')
  .requiredOption('--email <email>', 'email address')
  .addOption(new Option('--password <password>', 'password (at least 8 characters)').conflicts('passwordStdin'))
  .option('--password-stdin', 'read the password from standard input')
  .option('--admin', 'make the user an administrator')
  .option('--first-name <name>', 'first name')
  .option('--last-name <name>', 'last name')
  .action(async (options: { login: string; email: string; password?: string; passwordStdin?: boolean; admin?: boolean; firstName?: string; lastName?: string }) => {
    const password = options.passwordStdin ? await readStdin() : options.password;
    if (password === undefined) throw new ConfigError('give --password or --password-stdin');
    console.log(await withDatabase((database) => createUserCommand(database, { ...options, password })));
  });

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`cmi: ${error.message}`);
  } else if (error instanceof ClientError) {
    for (const [field, messages] of Object.entries(error.messages)) {
      for (const message of messages) console.error(`cmi: ${field === 'base' ? '' : `${field} `}${message}`);
    }
  } else {
    console.error(`cmi: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exitCode = 1;
}
