import { existsSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { connect as connectTcp } from 'node:net';
import { dirname } from 'node:path';
import { sql } from 'kysely';
import { type Config, ConfigError, loadConfig } from '../../config.js';
import { type ConnectionFailure, connectionFailureLine, connectionFailureOf } from '../../db/dialects/connection/connection-failure.js';
import { type Database, DatabaseMissing, openDatabase, schemaState } from '../../db/database.js';
import { dialectFor, displayDatabaseUrl } from '../../db/database-url.js';
import { alertRoutingRepository } from '../../alerts/alert-routing.store.js';
import { type LdapSettings, type OidcSettings, ProviderUnavailable, type SamlSettings } from '../../identity/external-identity.js';
import type { IdentityProvider } from '../../identity/identity-provider.js';
import { identityProvidersRepository } from '../../identity/identity-providers.store.js';

/**
 * What `cmi doctor` checks, each a function answering one line: ok, warn or fail, and what to fix
 * (docs/operations.md#cmi-doctor). None changes anything: no database is created or migrated.
 */
export type CheckState = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  check: string;
  state: CheckState;
  message: string;
  /** What to do about it; null when there is nothing to do. */
  fix: string | null;
}

const ok = (check: string, message: string): CheckResult => ({ check, state: 'ok', message, fix: null });
const warn = (check: string, message: string, fix: string): CheckResult => ({ check, state: 'warn', message, fix });
const fail = (check: string, message: string, fix: string): CheckResult => ({ check, state: 'fail', message, fix });

/** Free space under which the SQLite file's disk is a warning, and a failure (a full disk refuses every write). */
export const DISK_WARN_BYTES = 1024 ** 3;
export const DISK_FAIL_BYTES = 100 * 1024 ** 2;

/** A clock this far from the database's is a warning (sessions, lockout windows, snoozes are read against both), and this far a failure. */
export const SKEW_WARN_MS = 1000;
export const SKEW_FAIL_MS = 30_000;

/** How long a webhook destination may take to accept a connection. */
export const WEBHOOK_CONNECT_TIMEOUT_MS = 3000;

export function checkConfiguration(env: NodeJS.ProcessEnv): { result: CheckResult; config?: Config } {
  try {
    const config = loadConfig(env);
    return { result: ok('configuration', `every setting is valid; DATABASE_URL ${displayDatabaseUrl(config.databaseUrl)}`), config };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { result: fail('configuration', error.message, 'correct that setting in the environment (or /etc/cmi/cmi.env); see docs/operations.md#configuration') };
  }
}

/** Opens the configured database without creating it; a result when it cannot be opened. */
export function openExisting(config: Config): { database?: Database; result?: CheckResult } {
  try {
    return { database: openDatabase(config, { mustExist: true }) };
  } catch (error) {
    if (error instanceof DatabaseMissing) return { result: fail('database', `no database at ${error.where}`, 'point DATABASE_URL at the database, or create this one with cmi migrate') };
    const failure = connectionFailureOf(error);
    if (failure !== undefined) return { result: failedConnection(failure) };
    return { result: fail('database', error instanceof Error ? error.message : String(error), 'check DATABASE_URL and the file\'s permissions') };
  }
}

/** The one line of a database that cannot be reached, as what failed and what to check. */
function failedConnection(failure: ConnectionFailure): CheckResult {
  const line = connectionFailureLine(failure);
  const cut = line.indexOf('; check ');
  return fail('database', line.slice(0, cut), line.slice(cut + 2));
}

/** The database answers, and its schema is the one this cmi needs. */
export async function checkDatabaseAndSchema(database: Database, config: Config): Promise<CheckResult[]> {
  const where = displayDatabaseUrl(config.databaseUrl);
  let schema;
  try {
    schema = await schemaState(database);
  } catch (error) {
    const failure = connectionFailureOf(error);
    if (failure !== undefined) return [failedConnection(failure)];
    return [fail('database', `${where}: ${error instanceof Error ? error.message : String(error)}`, 'check DATABASE_URL and the database server\'s log')];
  }
  const reachable = ok('database', `${where} answers`);
  if (schema.version === undefined) return [reachable, fail('schema', 'cmi never migrated this database', 'cmi migrate (or start cmi serve, which migrates)')];
  if (schema.pending.length > 0) {
    const count = `${schema.pending.length} migration${schema.pending.length === 1 ? '' : 's'}`;
    return [reachable, warn('schema', `schema ${schema.version}, ${count} of this cmi pending: ${schema.pending.join(', ')}`, `cmi migrate (cmi serve also applies them when it starts; docs/operations.md#upgrades-and-migrations)`)];
  }
  return [reachable, ok('schema', `schema ${schema.version}, up to date`)];
}

const inMegabytes = (bytes: number) => `${Math.floor(bytes / 1024 ** 2)} MiB`;

/** Free space on the disk of a SQLite file (`path`), read with statfs. */
export async function checkDiskSpace(path: string): Promise<CheckResult> {
  // The file's folder, or the nearest one that exists (a database not created yet).
  let directory = dirname(path);
  while (!existsSync(directory) && dirname(directory) !== directory) directory = dirname(directory);
  const stats = await statfs(directory);
  const free = stats.bavail * stats.bsize;
  const total = stats.blocks * stats.bsize;
  const message = `${inMegabytes(free)} free of ${inMegabytes(total)} under ${directory}`;
  const fix = `free space on that disk, or move the database to a larger one (cmi backup, then cmi restore there); a full disk makes every write answer 503`;
  if (free < DISK_FAIL_BYTES) return fail('disk', message, fix);
  if (free < DISK_WARN_BYTES) return warn('disk', message, fix);
  return ok('disk', message);
}

/** The process's clock against the database's (`select now()`), half the round trip allowed for. */
export async function checkClockSkew(database: Database): Promise<CheckResult> {
  const before = Date.now();
  const { rows } = await sql<{ now: Date | string }>`select now() as now`.execute(database.db);
  const after = Date.now();
  const databaseNow = new Date(rows[0]?.now ?? Number.NaN).getTime();
  return clockSkewResult(databaseNow - (before + after) / 2, after - before);
}

export function clockSkewResult(skewMs: number, roundTripMs: number): CheckResult {
  const direction = skewMs > 0 ? 'behind' : 'ahead of';
  const message = `this machine's clock is ${Math.abs(Math.round(skewMs))} ms ${direction} the database's (round trip ${roundTripMs} ms)`;
  const fix = 'keep both machines\' clocks synchronised (systemd-timesyncd, chrony or ntpd): sessions, lockout windows and snoozes are read against both';
  if (!Number.isFinite(skewMs)) return fail('clock', 'the database did not tell its time', 'check the database');
  if (Math.abs(skewMs) >= SKEW_FAIL_MS) return fail('clock', message, fix);
  if (Math.abs(skewMs) >= SKEW_WARN_MS) return warn('clock', message, fix);
  return ok('clock', message);
}

export interface WebhookDestination {
  /** Where it is configured, e.g. CMI_ALERT_WEBHOOK_URL. */
  setting: string;
  url: string;
}

/** scheme://host:port of a URL: its path and query may hold a secret (a chat's webhook token), so only this is printed. */
function originOf(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

function tcpConnect(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host, port });
    const done = (problem: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => done(`no connection within ${timeoutMs} ms`), timeoutMs);
    socket.once('connect', () => done(undefined));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? 'connection refused' : error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN' ? 'host not found' : (error.code ?? error.message)));
  });
}

/**
 * Whether each webhook destination accepts a TCP connection within `timeoutMs`: a list, so that
 * destinations kept elsewhere than the environment can be checked the same way. Nothing is sent.
 */
export async function checkWebhookDestinations(destinations: readonly WebhookDestination[], timeoutMs = WEBHOOK_CONNECT_TIMEOUT_MS): Promise<CheckResult[]> {
  if (destinations.length === 0) return [ok('webhooks', 'none configured (CMI_ALERT_WEBHOOK_URL, CMI_REPORT_WEBHOOK_URL)')];
  return Promise.all(destinations.map(async ({ setting, url }) => {
    const parsed = new URL(url);
    const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    const problem = await tcpConnect(host, port, timeoutMs);
    const origin = originOf(parsed);
    if (problem === undefined) return ok('webhooks', `${setting}: ${origin} accepts connections`);
    return fail('webhooks', `${setting}: ${origin}: ${problem}`, `check that the receiver runs and that this machine may reach it (firewall, proxy); deliveries are retried meanwhile (docs/reporting-and-alerts.md#the-outbox)`);
  }));
}

/**
 * The enabled alert destinations (docs/alert-routing.md): a webhook's or Slack's URL, a mail
 * destination's SMTP server.
 */
async function routedDestinations(database: Database): Promise<WebhookDestination[]> {
  const { items } = await alertRoutingRepository(database).pageDestinations(1000, 0);
  return items.filter((destination) => destination.enabled).map((destination) => ({
    setting: `alert destination ${destination.id} (${destination.kind})`,
    url: destination.kind === 'email'
      ? `smtp://${destination.smtp_host ?? 'localhost'}:${destination.smtp_port ?? (destination.smtp_security === 'tls' ? 465 : 587)}`
      : destination.url ?? '',
  })).filter((destination) => destination.url !== '');
}

/** What an enabled provider's check asks of its module: discovery (OIDC), metadata (SAML), a bind or an answer (LDAP). */
async function providerAnswers(provider: IdentityProvider): Promise<void> {
  // Loaded here only: the protocols' libraries are for this check, not for every cmi command.
  if (provider.kind === 'oidc') return (await import('../../identity/oidc.js')).oidcCheck(provider.settings as OidcSettings);
  if (provider.kind === 'saml') return (await import('../../identity/saml.js')).samlCheck(provider.settings as SamlSettings);
  return (await import('../../identity/ldap.js')).ldapCheck(provider.settings as LdapSettings);
}

/**
 * Whether each enabled identity provider answers (docs/operations.md#cmi-doctor): one that does not is a
 * failure, with its module's message (never a secret): its people cannot sign in (password sign-ins
 * of accounts with a cmi password, and API keys, still work).
 */
export async function checkIdentityProviders(database: Database): Promise<CheckResult[]> {
  const providers = await identityProvidersRepository(database).enabled();
  return Promise.all(providers.map(async (provider) => {
    const name = `identity provider ${provider.id} "${provider.label}" (${provider.kind})`;
    try {
      await providerAnswers(provider);
      return ok('identity', `${name} answers`);
    } catch (error) {
      const problem = error instanceof ProviderUnavailable ? error.message : `its check failed: ${error instanceof Error ? error.name : 'unknown error'}`;
      return fail('identity', `${name}: ${problem}`, `start the provider or let this machine reach it, or correct its settings (cmi identity-providers edit ${provider.id}); meanwhile its people cannot sign in through it, password sign-ins and API keys still work (docs/security.md#identity-providers)`);
    }
  }));
}

/** Every check, in order; the checks that need the database are left out when it cannot be opened. */
export async function runChecks(env: NodeJS.ProcessEnv): Promise<CheckResult[]> {
  const { result, config } = checkConfiguration(env);
  if (config === undefined) return [result];
  const results = [result];
  const destinations: WebhookDestination[] = [];
  if (config.webhooks.alertUrl !== undefined) destinations.push({ setting: 'CMI_ALERT_WEBHOOK_URL', url: config.webhooks.alertUrl });
  if (config.webhooks.reportUrl !== undefined) destinations.push({ setting: 'CMI_REPORT_WEBHOOK_URL', url: config.webhooks.reportUrl });
  const identity: CheckResult[] = [];
  const opened = openExisting(config);
  if (opened.database !== undefined) {
    const database = opened.database;
    try {
      const answered = await checkDatabaseAndSchema(database, config);
      results.push(...answered);
      // SQLite reads this machine's clock: only a database server's may differ.
      const skew = database.dialect.choose({ sqlite: false, postgres: true });
      if (skew && answered[0]?.state === 'ok') results.push(await checkClockSkew(database));
      if (answered.every((check) => check.state === 'ok')) {
        destinations.push(...await routedDestinations(database));
        identity.push(...await checkIdentityProviders(database));
      }
    } finally {
      await database.close();
    }
  } else if (opened.result !== undefined) {
    results.push(opened.result);
  }
  // The disk of a SQLite file; a database server's disk is the server's to watch.
  const dialect = dialectFor(config.databaseUrl);
  if (dialect.choose({ sqlite: true, postgres: false })) results.push(await checkDiskSpace(dialect.target));
  results.push(...await checkWebhookDestinations(destinations), ...identity);
  return results;
}
