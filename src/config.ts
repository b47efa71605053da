import { availableParallelism } from 'node:os';
import { userLimits } from './shared/limits.js';
import type { WebhookSettings } from './alerts/webhook-events.js';
import { displayUrl } from './alerts/sender.js';
import { dialectFor, displayDatabaseUrl } from './db/database-url.js';
import type { PoolSettings } from './db/dialects/connection/connection.js';

/** Everything cmi reads from its environment, validated once at start-up. */
export interface Config {
  host: string;
  port: number;
  databaseUrl: string;
  /** PostgreSQL connection pool; SQLite has one connection per process. */
  pool: PoolSettings;
  defaultPerPage: number;
  maxPerPage: number;
  logLevel: LogLevel;
  bodyLimitBytes: number;
  /** The most the rendered-page cache of a process may cost, in bytes (0: no page is kept). */
  pageCacheBytes: number;
  /** How long a whole request (line, headers, body) may take to arrive, in ms. */
  requestTimeoutMs: number;
  /** The longest a request body may pause, in ms. */
  bodyTimeoutMs: number;
  /** Connections a process holds at once, in all and from one client address. */
  maxConnections: number;
  maxConnectionsPerAddress: number;
  sessionMaxAgeSeconds: number;
  sessionIdleSeconds: number;
  /** Failed logins allowed within lockoutWindowSeconds: per name from one address, per address, per name (docs/security.md#brute-force). */
  lockoutMaxFailures: number;
  lockoutAddressMaxFailures: number;
  lockoutAccountMaxFailures: number;
  lockoutWindowSeconds: number;
  /**
   * How long a verified credential is trusted without rechecking, in seconds (0 turns caching off); a
   * change to it in any process ends that at once where that change is heard (docs/security.md#suspend-now-means-now).
   */
  authCacheSeconds: number;
  /** Whether X-Forwarded-For/-Proto from a proxy in front are believed. */
  trustProxy: boolean;
  /** Server processes sharing the port (1: no cluster). */
  workers: number;
  /** How long a stopping process waits for requests in flight, in seconds. */
  shutdownTimeoutSeconds: number;
  adminLogin: string;
  adminEmail: string;
  adminPassword: string | undefined;
  /** The error tracker (docs/operations.md#the-error-tracker). */
  errors: {
    retentionDays: number;
    /** Which occurrences each error keeps: the first and the latest so many. */
    sample: { first: number; latest: number };
    ingestPerSecond: number;
    maxPending: number;
    /** Where a dying process leaves the faults it could not write. */
    spoolDirectory: string;
  };
  /** Audit events older than this many days are removed by the retention job (docs/operations.md#retention). */
  auditRetentionDays: number;
  /** Reports and alerts (docs/reporting-and-alerts.md). */
  webhooks: WebhookSettings;
  /** The OnApp version `GET /version` reports, `<major>.<minor>` (docs/api.md#version). */
  onappVersion: string;
  /** CMI_PUBLIC_URL as given (no trailing slash): ingest keys' DSNs start with it; unset, with the address a request reached (docs/sentry.md#the-dsn). */
  publicUrl: string | undefined;
  /** Serve /openapi.json and /docs (docs/api.md#openapi). */
  openApi: boolean;
  /** Metrics (docs/operations.md#metrics): a bearer token for /metrics on the API port, and/or a port of 127.0.0.1. */
  metrics: { token: string | undefined; port: number | undefined };
  /** One JSON line a request (docs/operations.md#access-log). */
  accessLog: boolean;
  /** How `cmi serve` writes its start-up and stop lines (docs/operations.md#log-format). */
  logFormat: 'json' | 'pretty';
  /** Test and benchmark switch: a request with `X-Cmi-Inject-Fault: 1` fails (`capture`) and is recorded, or not (`uncaptured`). */
  faultInjection: 'off' | 'capture' | 'uncaptured';
}


/** The longest webhook URL accepted. */
const MAX_URL_CHARS = 2048;
const MIN_SECRET_CHARS = 16;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export interface Setting {
  /** The `cmi serve` flag laid over the variable, if it has one. */
  flag?: string;
  /** As the variable would be written; undefined: none (see `help`). */
  default: string | undefined;
  help: string;
}

/**
 * Every setting, by environment variable: the one place its default is stated. `cmi serve --help`
 * prints this table; docs/operations.md explains each setting.
 */
export const SETTINGS = {
  PORT: { flag: '--port <port>', default: '3000', help: 'port to listen on (0: any free port)' },
  HOST: { flag: '--host <host>', default: '127.0.0.1', help: 'address to listen on' },
  DATABASE_URL: { flag: '--database-url <url>', default: 'sqlite:./data/cmi.sqlite3', help: 'sqlite:<path> or postgres://user@host:port/db' },
  CMI_DEFAULT_PER_PAGE: { flag: '--default-per-page <n>', default: '25', help: 'list page size when none is asked for (at most CMI_MAX_PER_PAGE)' },
  CMI_MAX_PER_PAGE: { flag: '--max-per-page <n>', default: '1000', help: 'largest per_page accepted' },
  LOG_LEVEL: { flag: '--log-level <level>', default: 'info', help: LOG_LEVELS.join(', ') },
  CMI_WORKERS: { flag: '--workers <n>', default: '1', help: 'server processes sharing the port, or auto for one per core' },
  CMI_DB_POOL: { default: '10', help: 'PostgreSQL connections per process' },
  CMI_DB_STATEMENT_TIMEOUT: { default: '5000', help: 'longest a statement may run or wait for a lock, in ms; then 503' },
  CMI_BODY_LIMIT: { default: '1048576', help: 'largest request body, in bytes' },
  CMI_REQUEST_TIMEOUT: { default: '30000', help: 'a request (line, headers and body) must arrive within this many ms; else 408 and the connection closed' },
  CMI_BODY_TIMEOUT: { default: '10000', help: 'a request body may pause at most this many ms; else 408 and the connection closed' },
  CMI_MAX_CONNECTIONS: { default: '4096', help: 'connections a process holds at once; more are closed at once' },
  CMI_MAX_CONNECTIONS_PER_ADDRESS: { default: '128', help: 'connections a process holds from one client address (unset with CMI_TRUST_PROXY: CMI_MAX_CONNECTIONS)' },
  CMI_PAGE_CACHE_BYTES: { default: '33554432', help: 'the most the rendered answers a process keeps may cost, in bytes, for each of its two caches: users pages, tracker pages and records (0: none kept)' },
  CMI_SESSION_MAX_AGE: { default: '43200', help: 'a session ends this many seconds after login' },
  CMI_SESSION_IDLE_TIMEOUT: { default: '1800', help: 'a session ends after this many seconds unused' },
  CMI_LOCKOUT_MAX_FAILURES: { default: '10', help: 'failed logins allowed for one login from one address in a window' },
  CMI_LOCKOUT_ADDRESS_MAX_FAILURES: { default: '100', help: 'failed logins allowed from one address, across logins, in a window' },
  CMI_LOCKOUT_ACCOUNT_MAX_FAILURES: { default: '50', help: 'failed logins allowed for one login, across addresses, in a window (not applied where it logged in before)' },
  CMI_LOCKOUT_WINDOW: { default: '900', help: 'the failed-login window, in seconds' },
  CMI_AUTH_CACHE_TTL: { default: '5', help: 'seconds a verified credential is trusted without rechecking, unless a change to it is heard first (0: off)' },
  CMI_TRUST_PROXY: { default: 'false', help: 'believe X-Forwarded-For/-Proto from one proxy in front' },
  CMI_SHUTDOWN_TIMEOUT: { default: '10', help: 'seconds a stopping process waits for requests in flight' },
  CMI_ERRORS_RETENTION_DAYS: { default: '90', help: 'infrastructure errors not seen for this many days are removed' },
  CMI_ERRORS_SAMPLE_FIRST: { default: '10', help: 'occurrences kept of each error from its start' },
  CMI_ERRORS_SAMPLE_LATEST: { default: '100', help: 'latest occurrences kept of each error' },
  CMI_ERRORS_RATE_LIMIT: { default: '2000', help: 'error reports one credential may send a second, per process; then 429' },
  CMI_ERRORS_QUEUE: { default: '10000', help: 'error reports that may wait for the database, per process; then 503' },
  CMI_AUDIT_RETENTION_DAYS: { default: '400', help: 'audit events older than this many days are removed' },
  CMI_SPOOL_DIR: { default: './data/spool', help: 'where a crashing process leaves faults for the next start to record' },
  CMI_REPORT_WEBHOOK_URL: { default: undefined, help: 'http(s) URL that POST .../errors/:id/report delivers the error to before marking it reported; unset: it only marks it' },
  CMI_ALERT_WEBHOOK_URL: { default: undefined, help: 'http(s) URL that new and spiking errors are announced to; unset: no alerts' },
  CMI_WEBHOOK_SECRET: { default: undefined, help: `key (at least ${MIN_SECRET_CHARS} characters) that signs every delivery; required with either URL` },
  CMI_PUBLIC_URL: { default: undefined, help: 'the address links in webhook bodies and ingest keys\' DSNs start with; unset: http://HOST:PORT (DSNs: the address a request reached)' },
  CMI_WEBHOOK_TIMEOUT: { default: '5000', help: 'a webhook try must be answered within this many ms' },
  CMI_REPORT_BACKOFF: { default: '1000', help: 'ms before a report\'s second try (its third waits twice as long); 3 tries, then 502' },
  CMI_WEBHOOK_RETRY_BASE: { default: '1000', help: 'ms before an alert\'s first retry; each next waits twice as long, at most an hour' },
  CMI_WEBHOOK_RETRY_FOR: { default: '86400', help: 'seconds an alert is retried after it was queued; then it is failed' },
  CMI_WEBHOOK_POLL_INTERVAL: { default: '1000', help: 'ms between two reads of the outbox by each process' },
  CMI_ALERT_SPIKE_THRESHOLD: { default: '100', help: 'an error spikes when it occurs more than this many times within CMI_ALERT_SPIKE_WINDOW' },
  CMI_ALERT_SPIKE_WINDOW: { default: '60', help: 'the spike window, in seconds' },
  CMI_ALERT_RATE_LIMIT: { default: '5', help: 'messages an alert destination is sent a minute at most; what is due beyond that goes as one digest' },
  CMI_ALERT_COOLDOWN: { default: '3600', help: 'seconds after a spike alert before the same error may send another' },
  CMI_FAULT_INJECTION: { default: 'off', help: 'tests and benchmarks only: capture or uncaptured makes requests with X-Cmi-Inject-Fault: 1 fail' },
  CMI_ONAPP_VERSION: { default: '6.7', help: 'the OnApp version GET /version reports, <major>.<minor>: OnApp clients choose their fields and paths by it (the PHP wrapper knows 2.0 to 6.7)' },
  CMI_OPENAPI: { default: 'true', help: 'serve the OpenAPI document at /openapi.json and its reference page at /docs, without credentials' },
  CMI_METRICS_TOKEN: { default: undefined, help: `serve /metrics on the API port to requests with Authorization: Bearer <this> (at least ${MIN_SECRET_CHARS} characters); unset: not served there` },
  CMI_METRICS_PORT: { default: undefined, help: 'serve /metrics without credentials on this port of 127.0.0.1 (worker i of --workers on this port + i - 1); unset: no such port' },
  CMI_ACCESS_LOG: { default: 'false', help: 'one JSON line a request on stdout: method, route, status, duration, request id, user id, actor id, bytes' },
  CMI_LOG_FORMAT: { flag: '--log-format <format>', default: 'pretty', help: 'how cmi serve writes its start-up and stop lines: pretty (for people) or json (one object a line)' },
  CMI_ADMIN_LOGIN: { default: 'admin', help: 'login of the administrator created on an empty database' },
  CMI_ADMIN_EMAIL: { default: 'admin@localhost', help: 'its email' },
  CMI_ADMIN_PASSWORD: { default: undefined, help: `its password (at least ${userLimits.passwordMinChars} characters); unset: one is generated and printed once` },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

/** A bad setting. The message is one line naming the variable, fit to print as is. */
export class ConfigError extends Error {}

type Source = Readonly<Record<string, string | undefined>>;

/**
 * Reads the configuration from `source` (the environment, with `cmi serve` flags laid over it).
 * Throws ConfigError on the first bad value.
 */
export function loadConfig(source: Source = process.env): Config {
  /** The value given, else the default; '' counts as not given. */
  const raw = (name: SettingName): string | undefined => {
    const given = source[name];
    return given === undefined || given === '' ? SETTINGS[name].default : given;
  };
  const integer = (name: SettingName, min: number, max: number): number => {
    const value = raw(name) ?? '';
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`);
    }
    return Number(value);
  };
  const flag = (name: SettingName): boolean => {
    const value = raw(name);
    if (value === '0' || value === 'false') return false;
    if (value === '1' || value === 'true') return true;
    throw new ConfigError(`${name} must be true, false, 1 or 0 (got ${JSON.stringify(value)})`);
  };
  const text = (name: SettingName): string => raw(name) as string;
  const oneOf = <T extends string>(name: SettingName, allowed: readonly T[]): T => {
    const value = raw(name) ?? '';
    if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
    return value as T;
  };
  const dottedVersion = (name: SettingName): string => {
    const value = raw(name) ?? '';
    if (!/^\d{1,4}\.\d{1,4}$/.test(value)) throw new ConfigError(`${name} must be a dotted number <major>.<minor>, such as 6.7 (got ${JSON.stringify(value)})`);
    return value;
  };

  const databaseUrl = text('DATABASE_URL');
  try {
    dialectFor(databaseUrl);
  } catch (error) {
    throw new ConfigError(`DATABASE_URL ${(error as Error).message} (got ${JSON.stringify(displayDatabaseUrl(databaseUrl))})`);
  }
  const logLevel = text('LOG_LEVEL');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(logLevel)})`);
  }
  const host = text('HOST');
  if (!/^[A-Za-z0-9.:_-]{1,253}$/.test(host)) throw new ConfigError(`HOST must be a host name or IP address (got ${JSON.stringify(host)})`);
  const maxPerPage = integer('CMI_MAX_PER_PAGE', 1, 100_000);
  const defaultGiven = source.CMI_DEFAULT_PER_PAGE !== undefined && source.CMI_DEFAULT_PER_PAGE !== '';
  // Unset, the default page size shrinks to fit a smaller maximum.
  const defaultPerPage = defaultGiven ? integer('CMI_DEFAULT_PER_PAGE', 1, 100_000) : Math.min(integer('CMI_DEFAULT_PER_PAGE', 1, 100_000), maxPerPage);
  if (defaultPerPage > maxPerPage) {
    throw new ConfigError(`CMI_DEFAULT_PER_PAGE must not exceed CMI_MAX_PER_PAGE (${defaultPerPage} > ${maxPerPage})`);
  }
  const trustProxy = flag('CMI_TRUST_PROXY');
  const maxConnections = integer('CMI_MAX_CONNECTIONS', 1, 1_000_000);
  const perAddressGiven = source.CMI_MAX_CONNECTIONS_PER_ADDRESS !== undefined && source.CMI_MAX_CONNECTIONS_PER_ADDRESS !== '';
  const adminPassword = raw('CMI_ADMIN_PASSWORD');
  if (adminPassword !== undefined && [...adminPassword].length < userLimits.passwordMinChars) {
    throw new ConfigError(`CMI_ADMIN_PASSWORD must be at least ${userLimits.passwordMinChars} characters`);
  }
  const port = integer('PORT', 0, 65_535);
  const webhookUrl = (name: SettingName): string | undefined => {
    const value = raw(name);
    if (value === undefined) return undefined;
    let parsed: URL | undefined;
    try {
      parsed = new URL(value);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || value.length > MAX_URL_CHARS) {
      throw new ConfigError(`${name} must be an http or https URL of at most ${MAX_URL_CHARS} characters (got ${JSON.stringify(parsed ? displayUrl(value) : value.slice(0, 100))})`);
    }
    // As the WHATWG parser normalises it (scheme and host lower-cased, spaces trimmed): what is sent to
    // is exactly what was validated.
    return parsed.href;
  };
  const reportUrl = webhookUrl('CMI_REPORT_WEBHOOK_URL');
  const alertUrl = webhookUrl('CMI_ALERT_WEBHOOK_URL');
  const secret = raw('CMI_WEBHOOK_SECRET') ?? '';
  if ((reportUrl !== undefined || alertUrl !== undefined) && [...secret].length < MIN_SECRET_CHARS) {
    throw new ConfigError(`CMI_WEBHOOK_SECRET must be set, at least ${MIN_SECRET_CHARS} characters, when CMI_REPORT_WEBHOOK_URL or CMI_ALERT_WEBHOOK_URL is`);
  }
  const metricsToken = raw('CMI_METRICS_TOKEN');
  if (metricsToken !== undefined && (metricsToken.length < MIN_SECRET_CHARS || !/^[\x21-\x7e]+$/.test(metricsToken))) {
    throw new ConfigError(`CMI_METRICS_TOKEN must be at least ${MIN_SECRET_CHARS} printable characters without spaces`);
  }
  const givenPublicUrl = webhookUrl('CMI_PUBLIC_URL')?.replace(/\/+$/, '');
  const publicUrl = givenPublicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    host,
    port,
    databaseUrl,
    pool: {
      size: integer('CMI_DB_POOL', 1, 1000),
      statementTimeoutMs: integer('CMI_DB_STATEMENT_TIMEOUT', 100, 3_600_000),
      timeQueries: metricsToken !== undefined || raw('CMI_METRICS_PORT') !== undefined,
    },
    defaultPerPage,
    maxPerPage,
    logLevel: logLevel as LogLevel,
    bodyLimitBytes: integer('CMI_BODY_LIMIT', 1024, 104_857_600),
    pageCacheBytes: integer('CMI_PAGE_CACHE_BYTES', 0, 1_073_741_824),
    requestTimeoutMs: integer('CMI_REQUEST_TIMEOUT', 100, 3_600_000),
    bodyTimeoutMs: integer('CMI_BODY_TIMEOUT', 100, 3_600_000),
    maxConnections,
    // Behind a proxy every connection comes from the proxy's address: unset, the cap is the total.
    maxConnectionsPerAddress: perAddressGiven || !trustProxy ? integer('CMI_MAX_CONNECTIONS_PER_ADDRESS', 1, 1_000_000) : maxConnections,
    sessionMaxAgeSeconds: integer('CMI_SESSION_MAX_AGE', 60, 30 * 86_400),
    sessionIdleSeconds: integer('CMI_SESSION_IDLE_TIMEOUT', 60, 30 * 86_400),
    lockoutMaxFailures: integer('CMI_LOCKOUT_MAX_FAILURES', 1, 1_000_000),
    lockoutAddressMaxFailures: integer('CMI_LOCKOUT_ADDRESS_MAX_FAILURES', 1, 1_000_000),
    lockoutAccountMaxFailures: integer('CMI_LOCKOUT_ACCOUNT_MAX_FAILURES', 1, 1_000_000),
    lockoutWindowSeconds: integer('CMI_LOCKOUT_WINDOW', 1, 86_400),
    authCacheSeconds: integer('CMI_AUTH_CACHE_TTL', 0, 300),
    trustProxy,
    workers: raw('CMI_WORKERS') === 'auto' ? availableParallelism() : integer('CMI_WORKERS', 1, 64),
    shutdownTimeoutSeconds: integer('CMI_SHUTDOWN_TIMEOUT', 0, 3600),
    adminLogin: text('CMI_ADMIN_LOGIN'),
    adminEmail: text('CMI_ADMIN_EMAIL'),
    adminPassword,
    errors: {
      retentionDays: integer('CMI_ERRORS_RETENTION_DAYS', 1, 36_500),
      sample: { first: integer('CMI_ERRORS_SAMPLE_FIRST', 0, 10_000), latest: integer('CMI_ERRORS_SAMPLE_LATEST', 1, 10_000) },
      ingestPerSecond: integer('CMI_ERRORS_RATE_LIMIT', 1, 1_000_000),
      maxPending: integer('CMI_ERRORS_QUEUE', 1, 1_000_000),
      spoolDirectory: text('CMI_SPOOL_DIR'),
    },
    auditRetentionDays: integer('CMI_AUDIT_RETENTION_DAYS', 1, 36_500),
    webhooks: {
      reportUrl,
      alertUrl,
      secret,
      publicUrl,
      timeoutMs: integer('CMI_WEBHOOK_TIMEOUT', 10, 600_000),
      reportBackoffMs: integer('CMI_REPORT_BACKOFF', 0, 600_000),
      retryBaseMs: integer('CMI_WEBHOOK_RETRY_BASE', 1, 3_600_000),
      retryForSeconds: integer('CMI_WEBHOOK_RETRY_FOR', 1, 30 * 86_400),
      pollIntervalMs: integer('CMI_WEBHOOK_POLL_INTERVAL', 10, 3_600_000),
      spikeThreshold: integer('CMI_ALERT_SPIKE_THRESHOLD', 1, 1_000_000_000),
      spikeWindowSeconds: integer('CMI_ALERT_SPIKE_WINDOW', 1, 86_400),
      cooldownSeconds: integer('CMI_ALERT_COOLDOWN', 0, 30 * 86_400),
      alertRateLimit: integer('CMI_ALERT_RATE_LIMIT', 1, 10_000),
    },
    onappVersion: dottedVersion('CMI_ONAPP_VERSION'),
    publicUrl: givenPublicUrl,
    openApi: flag('CMI_OPENAPI'),
    metrics: { token: metricsToken, port: raw('CMI_METRICS_PORT') === undefined ? undefined : integer('CMI_METRICS_PORT', 1, 65_535) },
    accessLog: flag('CMI_ACCESS_LOG'),
    logFormat: oneOf('CMI_LOG_FORMAT', ['json', 'pretty'] as const),
    faultInjection: oneOf('CMI_FAULT_INJECTION', ['off', 'capture', 'uncaptured'] as const),
  };
}
