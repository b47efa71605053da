import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import { type Config, ConfigError, loadConfig, SETTINGS, type Setting } from '../config.js';
import { systemClock } from '../shared/clock.js';
import { INTERNAL_ERROR_CODE, Unprocessable } from '../shared/problems.js';
import { createFirstAdministrator, type FirstAdministrator } from '../users/first-administrator.js';
import { auditTrailOn } from '../audit/audit-trail.js';
import { usersService } from '../users/users.service.js';
import { buildApp } from '../app/app.js';
import { listenForScrapes } from '../metrics/metrics-server.js';
import { faultSpool } from '../tracker/fault-spool.js';
import { type Database, migrateToLatest, openDatabase } from '../db/database.js';
import { displayDatabaseUrl } from '../db/database-url.js';
import { usersRepository } from '../users/users.store.js';
import { trackerRepository } from '../tracker/tracker.store.js';
import { reportNameCollisions } from '../users/name-collisions.js';
import { complain, exact, human, write } from './common/output.js';
import { Reported } from './common/usage-error.js';
import { connectionFailureLine, connectionFailureOf } from '../db/dialects/connection/connection-failure.js';
import { cliEnv } from './common/io.js';

const ADMIN_VARIABLES: Record<string, string> = { login: 'CMI_ADMIN_LOGIN', email: 'CMI_ADMIN_EMAIL', password: 'CMI_ADMIN_PASSWORD' };

/** A rejected first-administrator field, told as the variable it came from. */
function asAdminSettingError(error: unknown): unknown {
  if (!(error instanceof Unprocessable)) return error;
  const [field, messages] = Object.entries(error.messages)[0] ?? ['base', []];
  return new ConfigError(`${ADMIN_VARIABLES[field] ?? field} ${messages[0] ?? 'is invalid'}`);
}

/**
 * On an empty database, creates the first administrator. Called before the port opens, so the first
 * client that connects can already log in with it (before, a client connecting as the port opened got 401 for the administrator's valid credentials); a start that then fails
 * removes it again (forgetCreated), so a generated password is always printed: the next start
 * creates it (docs/operations.md#the-first-administrator).
 */
async function prepareFirstAdministrator(config: Config, database: Database): Promise<FirstAdministrator | undefined> {
  return createFirstAdministrator(usersService(usersRepository(database), systemClock, auditTrailOn(database, systemClock, config.auditRetentionDays)), {
    login: config.adminLogin,
    email: config.adminEmail,
    password: config.adminPassword,
  }).catch((error: unknown) => {
    throw asAdminSettingError(error);
  });
}

/** Removes the administrator this start created, as the start failed before it could print the password. */
async function forgetCreated(database: Database, first: FirstAdministrator | undefined): Promise<void> {
  if (first) await usersRepository(database).remove(first.user.id).catch(() => false);
}

/**
 * A start-up or stop line, for people (`--log-format pretty`) or as one JSON object (`json`;
 * docs/operations.md#log-format): what goes well on stdout, warnings and failures (`cmi: ...` for
 * people) on stderr.
 */
function say(config: Config, message: string, level: 'info' | 'warn' | 'fatal' = 'info'): void {
  const to = level === 'info' ? 'stdout' : 'stderr';
  if (config.logFormat === 'json') {
    write(exact(JSON.stringify({ time: new Date().toISOString(), level, pid: process.pid, msg: message.replace(/^cmi: /, '') })), to);
  } else {
    write(human(message), to);
  }
}

/** A warning of the start or stop, already worded `cmi: ...` for people. */
const warn = (config: Config) => (line: string) => say(config, line, 'warn');

/**
 * A database that cannot be reached stops the start with one line saying where, why and what to check
 * (docs/operations.md#when-the-database-cannot-be-reached), in the log format; anything else is
 * thrown on for the command's own handling.
 */
function reportStartFailure(config: Config, error: unknown): never {
  const failure = connectionFailureOf(error);
  if (failure === undefined) throw error;
  say(config, `cmi: ${connectionFailureLine(failure)}`, 'fatal');
  throw new Reported();
}

function printWelcome(config: Config, base: string, first: FirstAdministrator | undefined): void {
  const processes = config.workers > 1 ? ` with ${config.workers} workers` : '';
  say(config, `cmi listening on ${base}${processes} (${displayDatabaseUrl(config.databaseUrl)})`);
  if (first?.generatedPassword) {
    say(config, `Created administrator "${first.user.login}" with password: ${first.generatedPassword}`);
    say(config, 'This password is shown only once. Try:');
    say(config, `  curl -u '${first.user.login}:${first.generatedPassword}' ${base}/version.json`);
  } else if (first) {
    say(config, `Created administrator "${first.user.login}" with the password from CMI_ADMIN_PASSWORD.`);
    say(config, `Try: curl -u '${first.user.login}:<password>' ${base}/version.json`);
  } else {
    say(config, `Log in with an existing user: curl -u '<login>:<password>' ${base}/version.json`);
  }
  if (config.metrics.port !== undefined) {
    const url = (port: number) => `http://127.0.0.1:${port}/metrics`;
    const last = config.metrics.port + config.workers - 1;
    say(config, config.workers > 1 ? `Metrics: ${url(config.metrics.port)} (worker 1) to ${url(last)} (worker ${config.workers})` : `Metrics: ${url(config.metrics.port)}`);
  }
}

/**
 * Stops on SIGTERM or SIGINT: no new connections, requests in flight finish (for at most the
 * shutdown timeout), then the database closes.
 */
function drainOnSignal(app: FastifyInstance, database: Database, config: Config, scrapes: Server | undefined): void {
  const stop = async (signal: string) => {
    if (cluster.isPrimary) say(config, `${signal}: finishing requests in flight, then stopping`);
    scrapes?.close();
    const timer = setTimeout(() => {
      say(config, `cmi: requests still in flight after ${config.shutdownTimeoutSeconds} s; stopping anyway`, 'warn');
      process.exit(1);
    }, config.shutdownTimeoutSeconds * 1000);
    // A keep-alive connection whose request finishes after close() began would stay open until the
    // timeout: close each one as soon as it falls idle.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
    await app.close();
    clearInterval(sweep);
    await database.close();
    clearTimeout(timer);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/**
 * Faults no request or job caught (docs/operations.md#faults-of-cmi). An unhandled rejection is
 * recorded and the process goes on. An uncaught exception leaves the process in an unknown state:
 * what it holds is written to the spool synchronously (no query could finish before exit), then it
 * exits; the next process to start records the spool.
 */
function captureProcessFaults(app: FastifyInstance, config: Config): void {
  const log = (error: unknown, component: string, fault: { fingerprint: string; log: boolean; repeated: number }) => {
    if (fault.log) app.log.error({ code: INTERNAL_ERROR_CODE, err: error, component, fingerprint: fault.fingerprint, repeated: fault.repeated }, 'fault');
  };
  process.on('unhandledRejection', (reason) => log(reason, 'unhandled-rejection', app.faults.capture(reason, { component: 'unhandled-rejection' })));
  process.on('uncaughtException', (error) => {
    try {
      app.faults.capture(error, { component: 'uncaught-exception' });
      faultSpool(config.errors.spoolDirectory).writeSync(app.faults.pending());
    } finally {
      complain(...`cmi: uncaught exception, stopping: ${error.stack ?? String(error)}`.split('\n'));
      process.exit(1);
    }
  });
}

/**
 * Once listening, in the background: the first page of the users and of the errors read once, so the
 * first client's list finds the connection open, its statements prepared and the pages they read in
 * memory (a first list after start-up took 0.4 to 1 s on PostgreSQL). It never delays an answer: it
 * starts after the port opened, and a failure is left to the requests that meet it.
 */
function warmUp(database: Database, config: Config): void {
  setTimeout(() => {
    void (async () => {
      await usersRepository(database).page(config.defaultPerPage, 0);
      await trackerRepository(database).list({}, 'updated_at', 'desc', config.defaultPerPage, 0);
    })().catch(() => {});
  }, 0).unref();
}

/** A PEM file a setting names, read now: a file that cannot be read stops the start, naming the setting. */
function pemFile(setting: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`${setting}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/**
 * The syslog listeners of CMI_SYSLOG_LISTEN (docs/log-sources.md#listening), in each process: in
 * workers their ports are shared like the HTTP port's. A port that is taken stops the start.
 */
async function listenSyslog(app: FastifyInstance, config: Config): Promise<void> {
  const { listen, tls } = config.syslog;
  if (listen.length === 0) return;
  const files = tls === undefined ? undefined : {
    cert: pemFile('CMI_SYSLOG_TLS_CERT', tls.cert),
    key: pemFile('CMI_SYSLOG_TLS_KEY', tls.key),
    ca: tls.ca === undefined ? undefined : pemFile('CMI_SYSLOG_TLS_CA', tls.ca),
  };
  const listeners = await app.logSources.listenSyslog(listen, files).catch((error: unknown) => {
    throw new ConfigError(`CMI_SYSLOG_LISTEN: ${(error as Error).message}`);
  });
  if (listeners !== undefined && cluster.isPrimary) {
    say(config, `Syslog: ${listeners.addresses().map(({ transport, host, port }) => `${transport}://${host.includes(':') ? `[${host}]` : host}:${port}`).join(', ')}`);
  }
}

/** One server process: listens (on the port its cluster shares, in a worker) and drains on a signal. */
async function runServer(config: Config, database: Database): Promise<{ app: FastifyInstance; address: string }> {
  const app = await buildApp({ config, database });
  captureProcessFaults(app, config);
  // Worker i of --workers N scrapes on CMI_METRICS_PORT + i - 1 (docs/operations.md#metrics).
  const scrapePort = config.metrics.port === undefined ? undefined : config.metrics.port + Number(cliEnv().CMI_WORKER_INDEX ?? 0);
  const scrapes = app.metrics && scrapePort !== undefined
    ? await listenForScrapes(app.metrics, scrapePort).catch(async (error: unknown) => {
      await app.close();
      throw new ConfigError(`CMI_METRICS_PORT: cannot listen on 127.0.0.1:${scrapePort} (${(error as Error).message})`);
    })
    : undefined;
  drainOnSignal(app, database, config, scrapes);
  // fastify logs its own "Server listening at" line in pino's format; cmi says where it listens in the
  // start-up format instead (docs/operations.md#log-format), so that line is kept below the level.
  const level = app.log.level;
  app.log.level = 'warn';
  const address = await app.listen({ host: config.host, port: config.port }).catch(async (error: unknown) => {
    scrapes?.close();
    await app.close();
    throw error;
  }).finally(() => {
    app.log.level = level;
  });
  await listenSyslog(app, config).catch(async (error: unknown) => {
    scrapes?.close();
    await app.close();
    throw error;
  });
  warmUp(database, config);
  return { app, address: address.replace('0.0.0.0', '127.0.0.1') };
}

/**
 * The primary of `--workers N`: starts N workers on one port, starts a new one whenever one dies,
 * and on SIGTERM or SIGINT lets every worker drain before it exits itself.
 */
function superviseWorkers(config: Config, database: Database, first: FirstAdministrator | undefined): void {
  let stopping = false;
  let started = 0;
  const deaths: number[] = [];
  // Each worker keeps an index (its metrics port: CMI_METRICS_PORT + index); a replacement takes the dead one's.
  const indexOf = new Map<number, number>();
  const fork = (index: number): void => {
    if (stopping) return;
    const worker = cluster.fork({ CMI_WORKER_INDEX: String(index) });
    indexOf.set(worker.id, index);
    worker.once('listening', (address) => {
      started += 1;
      if (started > config.workers) say(config, `cmi: worker ${worker.process.pid} listens in place of one that exited`);
      if (started !== config.workers) return;
      const base = `http://${address.address ?? config.host}:${address.port}`.replace('0.0.0.0', '127.0.0.1');
      void database.close().then(() => printWelcome(config, base, first));
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(process.exitCode ?? 0);
      return;
    }
    if (started < config.workers) {
      warn(config)(`cmi: worker ${worker.process.pid} failed to start (exit ${signal ?? code}); stopping`);
      stopping = true;
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
      process.exitCode = 1;
      const created = first;
      first = undefined;
      void forgetCreated(database, created).then(() => {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(1);
      });
      return;
    }
    // A worker that keeps dying is restarted ever more slowly. The server stops only when no worker
    // is left serving and they died more than 10 times within a minute: healthy workers are never
    // stopped because their replacements fail (docs/operations.md#running-several-processes).
    const now = Date.now();
    deaths.push(now);
    while (deaths.length > 0 && (deaths[0] as number) < now - 60_000) deaths.shift();
    if (deaths.length > 10 && Object.keys(cluster.workers ?? {}).length === 0) {
      warn(config)(`cmi: workers died ${deaths.length} times within a minute and none is left; stopping`);
      stop('SIGTERM');
      process.exitCode = 1;
      return;
    }
    const delay = Math.min(30, deaths.length - 1);
    warn(config)(`cmi: worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting a new one${delay > 0 ? ` in ${delay} s` : ''}`);
    const index = indexOf.get(worker.id) ?? 0;
    indexOf.delete(worker.id);
    setTimeout(() => fork(index), delay * 1000);
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    say(config, `${signal}: workers finish requests in flight, then stop`);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    setTimeout(() => process.exit(1), (config.shutdownTimeoutSeconds + 2) * 1000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  for (let i = 0; i < config.workers; i++) fork(i);
}

/** `cmi serve`: one process, or a primary supervising `config.workers` workers. */
export async function serve(config: Config): Promise<void> {
  if (cluster.isWorker) {
    await runServer(config, openDatabase(config, { serving: true }));
    return;
  }
  // The primary of several workers only migrates and supervises: the workers serve.
  const database = openDatabase(config, { serving: config.workers === 1 });
  await migrateToLatest(database, { onWait: warn(config) }).catch(async (error: unknown) => {
    await database.close();
    reportStartFailure(config, error);
  });
  await reportNameCollisions(database, warn(config));
  // Before the port opens: a client that connects as soon as it can must find the administrator.
  const first = await prepareFirstAdministrator(config, database).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  if (config.workers > 1) {
    superviseWorkers(config, database, first);
    return;
  }
  const server = await runServer(config, database).catch(async (error: unknown) => {
    await forgetCreated(database, first);
    await database.close();
    throw error;
  });
  printWelcome(config, server.address, first);
}

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
  return loadConfig({ ...cliEnv(), ...overrides });
}

/** `cmi serve`, its flags and, after them in its help, every setting. */
export function addServeCommand(program: Command): void {
  const serveCommand = program.command('serve').description('run the HTTP server');
  for (const setting of SERVE_FLAGS) serveCommand.option(setting.flag, `${withDefault(setting)}; env ${setting.variable}`);
  serveCommand.addHelpText('after', environmentHelp);
  serveCommand.action((flags: Record<string, string>) => serve(configWith(flags)));
}
