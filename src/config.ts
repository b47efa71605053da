import { availableParallelism } from 'node:os';
import { passwordPolicyLimits, userLimits } from './shared/limits.js';
import type { AccountMailServer, PasswordPolicyDefaults } from './shared/account-settings.js';
import { type IpRange, parseIpRange } from './shared/ip-ranges.js';
import type { WebhookSettings } from './alerts/webhook-events.js';
import { displayUrl, refusedPort } from './alerts/sender.js';
import { type AllowedHosts, NO_ALLOWED_HOSTS, readAllowedHosts } from './alerts/address-guard.js';
import { dialectFor, displayDatabaseUrl } from './db/database-url.js';
import { parseListenSpec } from './logs/syslog-listener.js';
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
  /** The password policy until an administrator stores one (docs/security.md#password-policy). */
  passwordPolicy: PasswordPolicyDefaults;
  /**
   * How long a verified credential is trusted without rechecking, in seconds (0 turns caching off); a
   * change to it in any process ends that at once where that change is heard (docs/security.md#suspend-now-means-now).
   */
  authCacheSeconds: number;
  /** Whether X-Forwarded-For/-Proto from a proxy in front are believed. */
  trustProxy: boolean;
  /** The proxies whose X-Forwarded-For hops are believed, as normal addresses or CIDR ranges (CMI_TRUSTED_PROXIES); empty: none. */
  trustedProxies: readonly string[];
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
  /** CMI_SMTP_URL, CMI_SMTP_PASSWORD, CMI_MAIL_FROM: where account mail goes (docs/security.md#unlocking-by-mail); undefined: none is sent. */
  accountMail: AccountMailServer | undefined;
  /** CMI_SIGN_IN_ORIGINS: origins besides cmi's own whose pages may post POST /users/sign_in (docs/console.md#signing-in-from-another-site). */
  signInOrigins: readonly string[];
  /** CMI_SYSLOG_LISTEN and its TLS files (docs/log-sources.md#listening): the listeners `cmi serve` starts, the files as named. */
  syslog: { listen: readonly string[]; tls: { cert: string; key: string; ca: string | undefined } | undefined };
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
export const MAX_URL_CHARS = 2048;
const MIN_SECRET_CHARS = 16;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** A bad setting. The message is one line naming the variable, fit to print as is. */
export class ConfigError extends Error {}

/**
 * What values a setting takes, and so how its text is read and what a bad one is told. `url` is an
 * http or https URL of at most MAX_URL_CHARS characters, read as the WHATWG parser normalises it;
 * `custom` reads the value with its own `parse` and says what it takes in `allowed` (markdown, for
 * the table in docs/operations.md#configuration).
 */
export type SettingKind =
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'boolean' }
  | { kind: 'enum'; values: readonly string[] }
  /** `sentTo`: a webhook's URL, whose port must be one fetch sends to (alerts/sender.ts refusedPort). */
  | { kind: 'url'; sentTo?: boolean }
  | { kind: 'text'; allowed?: string }
  | { kind: 'custom'; allowed: string; parse: (value: string, name: string) => unknown };

export type Setting = SettingKind & {
  /** The `cmi serve` flag laid over the variable, if it has one. */
  flag?: string;
  /** As the variable would be written; undefined: none, the setting is then unset (see `help`). */
  default: string | undefined;
  /** One line for `cmi serve --help`. */
  help: string;
  /** What it does, in markdown with links, for docs/operations.md's table; else `help`. */
  docs?: string;
};

/** CMI_SMTP_URL, CMI_SMTP_PASSWORD and CMI_MAIL_FROM read together; a ConfigError names what is wrong, never the password. */
function accountMailSettings(url: string | undefined, password: string | undefined, from: string | undefined): AccountMailServer | undefined {
  if (url === undefined) {
    if (from !== undefined || password !== undefined) throw new ConfigError('CMI_MAIL_FROM and CMI_SMTP_PASSWORD need CMI_SMTP_URL');
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('CMI_SMTP_URL must be smtp://[user[:password]@]host[:port] or smtps://...');
  }
  if ((parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') || parsed.hostname === '' || (parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search !== '') {
    throw new ConfigError('CMI_SMTP_URL must be smtp://[user[:password]@]host[:port] or smtps://...');
  }
  if (from === undefined || !/^[^\s@<>]+@[^\s@<>]+$/.test(from)) throw new ConfigError('CMI_MAIL_FROM must be an email address when CMI_SMTP_URL is set');
  const secure = parsed.protocol === 'smtps:';
  const user = parsed.username === '' ? null : decodeURIComponent(parsed.username);
  const given = parsed.password === '' ? password : decodeURIComponent(parsed.password);
  return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: parsed.port === '' ? (secure ? 465 : 587) : Number(parsed.port), secure, user, password: given ?? null, from };
}

/** `value` as an integer from min to max, else the ConfigError every integer setting gives. */
function integerIn(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return Number(value);
}

/** `value` as the WHATWG parser normalises it (scheme and host lower-cased, spaces trimmed): what is sent to is exactly what was validated. */
function httpUrl(name: string, value: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || value.length > MAX_URL_CHARS) {
    throw new ConfigError(`${name} must be an http or https URL of at most ${MAX_URL_CHARS} characters (got ${JSON.stringify(parsed ? displayUrl(value) : value.slice(0, 100))})`);
  }
  return parsed.href;
}

/**
 * Every setting, by environment variable, declared once: its kind and bounds (how it is read and
 * what a bad value is told), its default, its `cmi serve` flag, the line `cmi serve --help` prints
 * and what the table in docs/operations.md#configuration says of it (`npm run docs:settings` writes
 * that table from here; test/settings.test.ts fails when it differs). Rules between settings are in
 * loadConfig.
 */
export const SETTINGS = {
  PORT: { flag: '--port <port>', default: '3000', kind: 'integer', min: 0, max: 65_535, help: 'port to listen on (0: any free port)' },
  HOST: {
    flag: '--host <host>', default: '127.0.0.1', help: 'address to listen on',
    kind: 'custom', allowed: 'a host name or IP address (letters, digits, `. : _ -`)',
    parse: (value: string, name: string): string => {
      if (!/^[A-Za-z0-9.:_-]{1,253}$/.test(value)) throw new ConfigError(`${name} must be a host name or IP address (got ${JSON.stringify(value)})`);
      return value;
    },
    docs: 'address to listen on; `0.0.0.0` listens on every interface',
  },
  DATABASE_URL: {
    flag: '--database-url <url>', default: 'sqlite:./data/cmi.sqlite3', help: 'sqlite:<path> or postgres://user@host:port/db',
    kind: 'custom', allowed: '`sqlite:<path>`, or `postgres://user:password@host:5432/database` (`postgresql://` too)',
    parse: (value: string, name: string): string => {
      try {
        dialectFor(value);
      } catch (error) {
        throw new ConfigError(`${name} ${(error as Error).message} (got ${JSON.stringify(displayDatabaseUrl(value))})`);
      }
      return value;
    },
    docs: 'the database; a `sqlite:` path is relative to the working directory (the directory is created); see [Running on PostgreSQL](#running-on-postgresql)',
  },
  CMI_DEFAULT_PER_PAGE: {
    flag: '--default-per-page <n>', default: '25', kind: 'integer', min: 1, max: 100_000, help: 'list page size when none is asked for (at most CMI_MAX_PER_PAGE)',
    docs: 'list page size when none is asked for, not above `CMI_MAX_PER_PAGE` (when unset, the default shrinks to fit a smaller `CMI_MAX_PER_PAGE`)',
  },
  CMI_MAX_PER_PAGE: { flag: '--max-per-page <n>', default: '1000', kind: 'integer', min: 1, max: 100_000, help: 'largest per_page accepted', docs: 'largest `per_page` accepted' },
  LOG_LEVEL: {
    flag: '--log-level <level>', default: 'info', kind: 'enum', values: LOG_LEVELS, help: LOG_LEVELS.join(', '),
    docs: 'the least severe level of the JSON log lines written (`silent`: none)',
  },
  CMI_WORKERS: {
    flag: '--workers <n>', default: '1', help: 'server processes sharing the port, or auto for one per core',
    kind: 'custom', allowed: 'an integer 1–64, or `auto` for one per CPU core',
    parse: (value: string, name: string): number => (value === 'auto' ? availableParallelism() : integerIn(name, value, 1, 64)),
    docs: 'server processes sharing the port (see [Running several processes](#running-several-processes))',
  },
  CMI_DB_POOL: { default: '10', kind: 'integer', min: 1, max: 1000, help: 'PostgreSQL connections per process' },
  CMI_DB_STATEMENT_TIMEOUT: {
    default: '5000', kind: 'integer', min: 100, max: 3_600_000, help: 'longest a statement may run or wait for a lock, in ms; then 503',
    docs: 'milliseconds a statement may run (PostgreSQL cancels it; cmi itself gives up one second later) or wait for another process\'s lock (SQLite); the request then answers 503 ([When the database is sick](#when-the-database-is-sick))',
  },
  CMI_BODY_LIMIT: { default: '1048576', kind: 'integer', min: 1024, max: 104_857_600, help: 'largest request body, in bytes' },
  CMI_REQUEST_TIMEOUT: {
    default: '30000', kind: 'integer', min: 100, max: 3_600_000, help: 'a request (line, headers and body) must arrive within this many ms; else 408 and the connection closed',
    docs: 'milliseconds a whole request (request line, headers and body) may take to arrive, from its first byte. Past it cmi answers 408 and closes the connection ([limits.md](limits.md#connections)); the time a kept-alive connection waits between requests does not count',
  },
  CMI_BODY_TIMEOUT: {
    default: '10000', kind: 'integer', min: 100, max: 3_600_000, help: 'a request body may pause at most this many ms; else 408 and the connection closed',
    docs: 'milliseconds a request body may pause (nothing arriving) once cmi reads it; past it, 408 and the connection closed',
  },
  CMI_MAX_CONNECTIONS: {
    default: '4096', kind: 'integer', min: 1, max: 1_000_000, help: 'connections a process holds at once; more are closed at once',
    docs: 'connections one process holds at once; a connection over the cap is closed as soon as it is accepted, before anything is read',
  },
  CMI_MAX_CONNECTIONS_PER_ADDRESS: {
    default: '128', kind: 'integer', min: 1, max: 1_000_000, help: 'connections a process holds from one client address (unset behind a trusted proxy: CMI_MAX_CONNECTIONS)',
    docs: 'connections one process holds at once from one client address (as the socket sees it). Behind a proxy every connection comes from the proxy, so when `CMI_TRUST_PROXY` is true or `CMI_TRUSTED_PROXIES` is set, and this is unset, it is `CMI_MAX_CONNECTIONS`',
  },
  CMI_PAGE_CACHE_BYTES: {
    default: '33554432', kind: 'integer', min: 0, max: 1_073_741_824, help: 'the most the rendered answers a process keeps may cost, in bytes, for each of its two caches: users pages, tracker pages and records (0: none kept)',
    docs: 'the most the rendered answers a process keeps may cost, in bytes, for each of its two caches (the users list pages; the error tracker\'s list pages and records); `0` keeps none. A page costs its body\'s bytes plus its headers and cache key (two bytes a character) and a fixed overhead for the objects around it; when a new page does not fit, the oldest go first, and a page costing more than the whole bound is served but not kept. Each process (each worker) has its own',
  },
  CMI_SESSION_MAX_AGE: {
    default: '43200', kind: 'integer', min: 60, max: 30 * 86_400, help: 'a session ends this many seconds after login',
    docs: 'seconds a session lasts after its login, however much it is used (absolute timeout)',
  },
  CMI_SESSION_IDLE_TIMEOUT: {
    default: '1800', kind: 'integer', min: 60, max: 30 * 86_400, help: 'a session ends after this many seconds unused',
    docs: 'seconds a session lasts without a request (idle timeout)',
  },
  CMI_LOCKOUT_MAX_FAILURES: {
    default: '10', kind: 'integer', min: 1, max: 1_000_000, help: 'failed logins allowed for one login from one address in a window',
    docs: 'failed logins allowed for one login or email from one address within the window ([security.md](security.md#brute-force))',
  },
  CMI_LOCKOUT_ADDRESS_MAX_FAILURES: {
    default: '100', kind: 'integer', min: 1, max: 1_000_000, help: 'failed logins allowed from one address, across logins, in a window',
    docs: 'failed logins allowed from one address, across logins, within the window (not counted against an account that has logged in from that address)',
  },
  CMI_LOCKOUT_ACCOUNT_MAX_FAILURES: {
    default: '50', kind: 'integer', min: 1, max: 1_000_000, help: 'failed logins allowed for one login, across addresses, in a window (not applied where it logged in before)',
    docs: 'failed logins allowed for one login or email, across addresses, within the window (not applied from an address the account has logged in from)',
  },
  CMI_LOCKOUT_WINDOW: { default: '900', kind: 'integer', min: 1, max: 86_400, help: 'the failed-login window, in seconds', docs: 'the lockout window, in seconds' },
  CMI_PASSWORD_MIN_LENGTH: {
    default: String(userLimits.passwordMinChars), kind: 'integer', min: userLimits.passwordMinChars, max: passwordPolicyLimits.minLengthMax,
    help: 'the password policy\'s min_length until one is stored: characters a password has at least',
    docs: 'the [password policy](security.md#password-policy)\'s `min_length` while no policy is stored: the characters a new password has at least',
  },
  CMI_PASSWORD_REQUIRE_UPPER: { default: 'false', kind: 'boolean', help: 'the password policy\'s require_upper until one is stored', docs: 'the password policy\'s `require_upper` while none is stored: a new password holds an upper-case letter' },
  CMI_PASSWORD_REQUIRE_LOWER: { default: 'false', kind: 'boolean', help: 'the password policy\'s require_lower until one is stored', docs: 'the password policy\'s `require_lower` while none is stored: a new password holds a lower-case letter' },
  CMI_PASSWORD_REQUIRE_DIGIT: { default: 'false', kind: 'boolean', help: 'the password policy\'s require_digit until one is stored', docs: 'the password policy\'s `require_digit` while none is stored: a new password holds a digit' },
  CMI_PASSWORD_REQUIRE_SYMBOL: { default: 'false', kind: 'boolean', help: 'the password policy\'s require_symbol until one is stored', docs: 'the password policy\'s `require_symbol` while none is stored: a new password holds a character that is neither a letter nor a digit' },
  CMI_PASSWORD_HISTORY: {
    default: '0', kind: 'integer', min: 0, max: passwordPolicyLimits.historyMax, help: 'the password policy\'s history until one is stored: earlier passwords a new one may not repeat',
    docs: 'the password policy\'s `history` while none is stored: how many of a user\'s earlier passwords a new one may not repeat (0: any)',
  },
  CMI_PASSWORD_EXPIRY_MONTHS: {
    default: '0', kind: 'integer', min: 0, max: passwordPolicyLimits.expiryMonthsMax, help: 'the password policy\'s expiry_months until one is stored (0: never)',
    docs: 'the password policy\'s `expiry_months` while none is stored: months after which a password signs in only to change itself (0: never)',
  },
  CMI_PASSWORD_LOCKOUT_ATTEMPTS: {
    default: undefined, kind: 'integer', min: 1, max: passwordPolicyLimits.lockoutAttemptsMax, help: 'the password policy\'s lockout_attempts until one is stored; unset: CMI_LOCKOUT_MAX_FAILURES',
    docs: 'the password policy\'s `lockout_attempts` while none is stored; unset: `CMI_LOCKOUT_MAX_FAILURES` ([how they relate](security.md#password-policy))',
  },
  CMI_PASSWORD_LOCKOUT_MINUTES: {
    default: undefined, kind: 'integer', min: 1, max: passwordPolicyLimits.lockoutMinutesMax, help: 'the password policy\'s lockout_minutes until one is stored; unset: CMI_LOCKOUT_WINDOW',
    docs: 'the password policy\'s `lockout_minutes` while none is stored; unset: `CMI_LOCKOUT_WINDOW` ([how they relate](security.md#password-policy))',
  },
  CMI_PASSWORD_POLICY_REFRESH: {
    default: '1000', kind: 'integer', min: 10, max: 3_600_000, help: 'ms between two reads of the stored password policy by each process',
    docs: 'milliseconds between two reads of the stored [password policy](security.md#password-policy) by each process (how soon another process\'s change governs the lockout and expiry here)',
  },
  CMI_AUTH_CACHE_TTL: {
    default: '5', kind: 'integer', min: 0, max: 300, help: 'seconds a verified credential is trusted without rechecking, unless a change to it is heard first (0: off)',
    docs: 'seconds a process trusts a credential it has verified without checking it again, unless a change to a user or a logout in any process is heard first ([security.md](security.md#suspend-now-means-now)); `0` turns the cache off',
  },
  CMI_TRUST_PROXY: {
    default: 'false', kind: 'boolean', help: 'believe X-Forwarded-For/-Proto from one proxy in front',
    docs: 'believe `X-Forwarded-For` and `X-Forwarded-Proto` (set it only behind a proxy that overwrites them)',
  },
  CMI_TRUSTED_PROXIES: {
    default: undefined, kind: 'custom', allowed: 'IP addresses and CIDR ranges of the proxies in front (`10.0.0.5`, `10.0.0.0/8`, `fd00::/8`), separated by commas',
    parse: (value: string, name: string): string[] => {
      const parts = value.split(',').map((part) => part.trim()).filter((part) => part !== '');
      const ranges = parts.map((part) => parseIpRange(part));
      const bad = parts.find((_part, i) => ranges[i] === undefined);
      if (bad !== undefined || parts.length === 0) throw new ConfigError(`${name} must list IP addresses or CIDR ranges separated by commas (got ${JSON.stringify((bad ?? value).slice(0, 100))})`);
      return [...new Set(ranges.map((range) => (range as IpRange).text))];
    },
    help: 'proxies (addresses, CIDRs) whose X-Forwarded-For hops are believed, read from the right',
    docs: 'the proxies in front, as addresses or CIDR ranges separated by commas: `X-Forwarded-For` is read from the right, hop by hop, as long as each hop came from one of them, and the first address that did not is the client\'s ([Behind a proxy](#behind-a-proxy)); not with `CMI_TRUST_PROXY`',
  },
  CMI_SHUTDOWN_TIMEOUT: { default: '10', kind: 'integer', min: 0, max: 3600, help: 'seconds a stopping process waits for requests in flight' },
  CMI_ERRORS_RETENTION_DAYS: {
    default: '90', kind: 'integer', min: 1, max: 36_500, help: 'infrastructure errors not seen for this many days are removed',
    docs: '[infrastructure errors](api.md#infrastructure-errors) not seen (not updated) for this many days are removed by the [retention job](#retention)',
  },
  CMI_ERRORS_SAMPLE_FIRST: {
    default: '10', kind: 'integer', min: 0, max: 10_000, help: 'occurrences kept of each error from its start',
    docs: 'occurrences each error keeps from its start (see [The error tracker](#the-error-tracker))',
  },
  CMI_ERRORS_SAMPLE_LATEST: { default: '100', kind: 'integer', min: 1, max: 10_000, help: 'latest occurrences kept of each error' },
  CMI_ERRORS_RATE_LIMIT: {
    default: '2000', kind: 'integer', min: 1, max: 1_000_000, help: 'error reports one credential may send a second, per process; then 429',
    docs: 'error reports one credential may send a second, per process; beyond it, 429 with `Retry-After`',
  },
  CMI_ERRORS_QUEUE: {
    default: '10000', kind: 'integer', min: 1, max: 1_000_000, help: 'error reports that may wait for the database, per process; then 503',
    docs: 'error reports that may wait for the database, per process; beyond it, 503 with `Retry-After`',
  },
  CMI_AUDIT_RETENTION_DAYS: {
    default: '400', kind: 'integer', min: 1, max: 36_500, help: 'audit events older than this many days are removed',
    docs: '[audit events](api.md#audit-log) older than this many days are removed by the [retention job](#retention)',
  },
  CMI_SPOOL_DIR: {
    default: './data/spool', kind: 'text', allowed: 'a directory (a relative one from the working directory)', help: 'where a crashing process leaves faults for the next start to record',
    docs: 'where a process dying of an uncaught exception leaves the faults it held, for the next process to record ([Faults of cmi](#faults-of-cmi)); created when needed, mode 0700',
  },
  CMI_REPORT_WEBHOOK_URL: {
    default: undefined, kind: 'url', sentTo: true, help: 'http(s) URL that POST .../errors/:id/report delivers the error to before marking it reported; unset: it only marks it',
    docs: '[reporting an error](reporting-and-alerts.md#reporting-an-error) delivers the error to it before marking it reported; unset, reporting only marks it',
  },
  CMI_ALERT_WEBHOOK_URL: {
    default: undefined, kind: 'url', sentTo: true, help: 'http(s) URL that new and spiking errors are announced to; unset: no alerts',
    docs: '[alerts](reporting-and-alerts.md#alerts) (a new error, a spike) are POSTed to it; unset, none are queued',
  },
  CMI_WEBHOOK_SECRET: {
    default: undefined, kind: 'text', allowed: `at least ${MIN_SECRET_CHARS} characters; required when either URL is set`,
    help: `key (at least ${MIN_SECRET_CHARS} characters) that signs every delivery; required with either URL`,
    docs: 'the key that [signs](reporting-and-alerts.md#verifying-a-delivery) every delivery. Never logged nor answered',
  },
  CMI_PUBLIC_URL: {
    default: undefined, kind: 'url', help: 'the address links in webhook bodies and ingest keys\' DSNs start with; unset: http://HOST:PORT (DSNs: the address a request reached)',
    docs: 'the address the links in webhook bodies and the [ingest keys\' DSNs](sentry.md#the-dsn) start with; unset, `http://HOST:PORT` for links, the address a request reached for DSNs',
  },
  CMI_SMTP_URL: {
    default: undefined, kind: 'text', allowed: '`smtp://[user[:password]@]host[:port]` (STARTTLS when offered; port 587) or `smtps://...` (TLS; port 465)',
    help: 'the SMTP server account mail (the unlock link of a locked account) goes through; unset: none is sent',
    docs: 'the SMTP server [account mail](security.md#unlocking-by-mail) (the unlock link of a locked account) goes through, with its user and password if it needs them; unset, no account mail is sent. Never logged nor answered',
  },
  CMI_SMTP_PASSWORD: {
    default: undefined, kind: 'text', allowed: 'the SMTP password', help: 'the SMTP password, when CMI_SMTP_URL names a user but no password',
    docs: 'the SMTP password, when `CMI_SMTP_URL` names a user but holds no password. Never logged nor answered',
  },
  CMI_MAIL_FROM: {
    default: undefined, kind: 'text', allowed: 'an email address; required with `CMI_SMTP_URL`', help: 'the From address of account mail; required with CMI_SMTP_URL',
    docs: 'the From address of [account mail](security.md#unlocking-by-mail); required with `CMI_SMTP_URL`',
  },
  CMI_SIGN_IN_ORIGINS: {
    default: undefined, kind: 'text', allowed: 'comma-separated origins (`https://billing.example.com`)',
    help: 'origins (besides cmi\'s own) whose pages may post the sign-in form POST /users/sign_in (WHMCS); unset: cmi\'s own only',
    docs: 'origins, comma-separated, besides cmi\'s own, whose pages may post the [sign-in form](console.md#signing-in-from-another-site) `POST /users/sign_in` (WHMCS\'s users module); unset, cmi\'s own only',
  },
  CMI_WEBHOOK_TIMEOUT: {
    default: '5000', kind: 'integer', min: 10, max: 600_000, help: 'a webhook try must be answered within this many ms',
    docs: 'milliseconds one webhook try may take, from connecting to the end of the answer',
  },
  CMI_REPORT_BACKOFF: {
    default: '1000', kind: 'integer', min: 0, max: 600_000, help: 'ms before a report\'s second try (its third waits twice as long); 3 tries, then 502',
    docs: 'milliseconds before a report\'s second try (its third waits twice as long); after 3 tries, 502',
  },
  CMI_WEBHOOK_RETRY_BASE: {
    default: '1000', kind: 'integer', min: 1, max: 3_600_000, help: 'ms before an alert\'s first retry; each next waits twice as long, at most an hour',
    docs: 'milliseconds before an alert\'s first retry; each next waits twice as long, at most an hour',
  },
  CMI_WEBHOOK_RETRY_FOR: {
    default: '86400', kind: 'integer', min: 1, max: 30 * 86_400, help: 'seconds an alert is retried after it was queued; then it is failed',
    docs: 'seconds an alert is retried after it was queued, then it is `failed`',
  },
  CMI_WEBHOOK_POLL_INTERVAL: {
    default: '1000', kind: 'integer', min: 10, max: 3_600_000, help: 'ms between two reads of the outbox by each process',
    docs: 'milliseconds between two reads of the [outbox](reporting-and-alerts.md#the-outbox) by each process',
  },
  CMI_WEBHOOK_LEASE_MARGIN: {
    default: '30000', kind: 'integer', min: 1000, max: 3_600_000, help: 'ms a process\'s claim on a delivery outlives its try: how soon another process sends what a killed one had claimed',
    docs: 'milliseconds a claim on a delivery outlives its try (`CMI_WEBHOOK_TIMEOUT`): how soon after a process is killed another one sends what it had [claimed](reporting-and-alerts.md#the-outbox)',
  },
  CMI_ALERT_SPIKE_THRESHOLD: {
    default: '100', kind: 'integer', min: 1, max: 1_000_000_000, help: 'an error spikes when it occurs more than this many times within CMI_ALERT_SPIKE_WINDOW',
    docs: 'an error [spikes](reporting-and-alerts.md#alerts) when it occurs more than this many times within `CMI_ALERT_SPIKE_WINDOW`',
  },
  CMI_ALERT_SPIKE_WINDOW: { default: '60', kind: 'integer', min: 1, max: 86_400, help: 'the spike window, in seconds' },
  CMI_ALERT_RATE_LIMIT: {
    default: '5', kind: 'integer', min: 1, max: 10_000, help: 'messages an alert destination is sent a minute at most; what is due beyond that goes as one digest',
    docs: 'messages an alert destination is sent a minute at most; what is due beyond goes as one digest ([alert-routing.md](alert-routing.md#digests))',
  },
  CMI_ALERT_ALLOWED_HOSTS: {
    default: undefined, help: 'internal hosts alert destinations may be sent to: host names, addresses or CIDR ranges, separated by commas; unset: none (loopback, private and link-local addresses are refused)',
    kind: 'custom', allowed: 'host names, IP addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`), separated by commas or spaces',
    parse: (value: string, name: string): AllowedHosts => {
      const allowed = readAllowedHosts(value);
      if ('bad' in allowed) throw new ConfigError(`${name} must list host names, IP addresses or CIDR ranges separated by commas (got ${JSON.stringify(allowed.bad.slice(0, 100))})`);
      return allowed;
    },
    docs: 'the internal hosts [alert destinations](alert-routing.md#internal-addresses) may be sent to: host names, IP addresses or CIDR ranges. Unset, a destination that is or resolves to a loopback, private, link-local, unique-local or unspecified address is refused (the `CMI_*_WEBHOOK_URL` settings are not checked)',
  },
  CMI_ALERT_COOLDOWN: { default: '3600', kind: 'integer', min: 0, max: 30 * 86_400, help: 'seconds after a spike alert before the same error may send another' },
  CMI_FAULT_INJECTION: {
    default: 'off', kind: 'enum', values: ['off', 'capture', 'uncaptured'], help: 'tests and benchmarks only: capture or uncaptured makes requests with X-Cmi-Inject-Fault: 1 fail',
    docs: 'tests and benchmarks only: with `capture` (or `uncaptured`), an authenticated request carrying `X-Cmi-Inject-Fault: 1` fails as a fault of cmi would, recorded (or not). Never set it in production',
  },
  CMI_ONAPP_VERSION: {
    default: '6.7', help: 'the OnApp version GET /version reports, <major>.<minor>: OnApp clients choose their fields and paths by it (the PHP wrapper knows 2.0 to 6.7)',
    kind: 'custom', allowed: '`<major>.<minor>`, each of 1 to 4 digits',
    parse: (value: string, name: string): string => {
      if (!/^\d{1,4}\.\d{1,4}$/.test(value)) throw new ConfigError(`${name} must be a dotted number <major>.<minor>, such as 6.7 (got ${JSON.stringify(value)})`);
      return value;
    },
    docs: 'the OnApp version [`GET /version`](api.md#version) reports (the default is the newest the OnApp PHP wrapper knows): OnApp clients choose their fields and paths by it',
  },
  CMI_OPENAPI: {
    default: 'true', kind: 'boolean', help: 'serve the OpenAPI document at /openapi.json and its reference page at /docs, without credentials',
    docs: 'serve [`/openapi.json` and `/docs`](api.md#openapi) without credentials',
  },
  CMI_METRICS_TOKEN: {
    default: undefined, help: `serve /metrics on the API port to requests with Authorization: Bearer <this> (at least ${MIN_SECRET_CHARS} characters); unset: not served there`,
    kind: 'custom', allowed: `at least ${MIN_SECRET_CHARS} printable characters without spaces`,
    parse: (value: string, name: string): string => {
      if (value.length < MIN_SECRET_CHARS || !/^[\x21-\x7e]+$/.test(value)) throw new ConfigError(`${name} must be at least ${MIN_SECRET_CHARS} printable characters without spaces`);
      return value;
    },
    docs: 'serve [`/metrics`](#metrics) on the API port to `Authorization: Bearer <token>`; unset, `/metrics` is not served there',
  },
  CMI_METRICS_PORT: {
    default: undefined, kind: 'integer', min: 1, max: 65_535, help: 'serve /metrics without credentials on this port of 127.0.0.1 (worker i of --workers on this port + i - 1); unset: no such port',
    docs: 'serve [`/metrics`](#metrics) without credentials on this port of 127.0.0.1 only (with `--workers N`, worker *i* on this port + *i* − 1); unset, no such port',
  },
  CMI_SYSLOG_LISTEN: {
    default: undefined, kind: 'text', allowed: 'comma-separated `udp://HOST:PORT`, `tcp://HOST:PORT`, `tls://HOST:PORT`',
    help: 'where cmi takes syslog lines (docs/log-sources.md#syslog), e.g. tls://0.0.0.0:6514,udp://0.0.0.0:5514; unset: no syslog',
    docs: 'where cmi takes [syslog](log-sources.md#listening) lines, comma-separated: `udp://HOST:PORT`, `tcp://HOST:PORT`, `tls://HOST:PORT` (IPv6 in brackets); in `cmi serve` and each of its workers; unset, none',
  },
  CMI_SYSLOG_TLS_CERT: {
    default: undefined, kind: 'text', allowed: 'a PEM file', help: 'the PEM certificate (and its chain) of tls:// syslog listeners',
    docs: 'PEM file of the certificate (its chain after it) that `tls://` [syslog listeners](log-sources.md#listening) present; required with one',
  },
  CMI_SYSLOG_TLS_KEY: {
    default: undefined, kind: 'text', allowed: 'a PEM file', help: 'the PEM private key of tls:// syslog listeners',
    docs: 'PEM file of the private key of `CMI_SYSLOG_TLS_CERT`; required with a `tls://` listener',
  },
  CMI_SYSLOG_TLS_CA: {
    default: undefined, kind: 'text', allowed: 'a PEM file', help: 'a CA whose certificate every TLS syslog sender must present; unset: a client certificate is optional',
    docs: 'PEM file of the CA that signs the senders\' certificates: set, every TLS sender must present one it signed; unset, a client certificate is optional ([syslog](log-sources.md#listening))',
  },
  CMI_ACCESS_LOG: {
    default: 'false', kind: 'boolean', help: 'one JSON line a request on stdout: method, route, status, duration, request id, user id, actor id, bytes',
    docs: 'one [JSON line a request](#access-log) on standard output',
  },
  CMI_LOG_FORMAT: {
    flag: '--log-format <format>', default: 'pretty', kind: 'enum', values: ['json', 'pretty'], help: 'how cmi serve writes its start-up and stop lines: pretty (for people) or json (one object a line)',
    docs: 'how `cmi serve` writes its [start-up and stop lines](#log-format): `pretty` for people, `json` one object a line',
  },
  CMI_ADMIN_LOGIN: {
    default: 'admin', kind: 'text', allowed: 'a login, checked as any user\'s is', help: 'login of the administrator created on an empty database',
    docs: 'login of the [first administrator](#the-first-administrator), created on an empty database',
  },
  CMI_ADMIN_EMAIL: { default: 'admin@localhost', kind: 'text', allowed: 'an email address, checked as any user\'s is', help: 'its email', docs: 'email of the first administrator' },
  CMI_ADMIN_PASSWORD: {
    default: undefined, help: `its password (at least ${userLimits.passwordMinChars} characters); unset: one is generated and printed once`,
    kind: 'custom', allowed: `at least ${userLimits.passwordMinChars} characters`,
    parse: (value: string, name: string): string => {
      if ([...value].length < userLimits.passwordMinChars) throw new ConfigError(`${name} must be at least ${userLimits.passwordMinChars} characters`);
      return value;
    },
    docs: 'password of the first administrator; when unset, a random password is generated and printed once',
  },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

/** What a setting of this declaration reads as. */
type Parsed<S> = S extends { kind: 'integer' } ? number
  : S extends { kind: 'boolean' } ? boolean
    : S extends { kind: 'enum'; values: readonly (infer V)[] } ? V
      : S extends { kind: 'custom'; parse: (value: string, name: string) => infer R } ? R
        : string;

/** What setting `N` reads as: undefined when it has no default and is not given. */
export type SettingValue<N extends SettingName> = Parsed<(typeof SETTINGS)[N]> | ((typeof SETTINGS)[N]['default'] extends string ? never : undefined);

type Source = Readonly<Record<string, string | undefined>>;

/** The value given, else the default; '' counts as not given. */
function givenOrDefault(source: Source, name: SettingName): string | undefined {
  const given = source[name];
  return given === undefined || given === '' ? SETTINGS[name].default : given;
}

/** `value` of setting `name` read as its declaration says; a ConfigError naming it when it is not such a value. */
function parseSetting(name: SettingName, value: string): unknown {
  const setting: Setting = SETTINGS[name];
  switch (setting.kind) {
    case 'integer':
      return integerIn(name, value, setting.min, setting.max);
    case 'boolean':
      if (value === '0' || value === 'false') return false;
      if (value === '1' || value === 'true') return true;
      throw new ConfigError(`${name} must be true, false, 1 or 0 (got ${JSON.stringify(value)})`);
    case 'enum':
      if (!setting.values.includes(value)) throw new ConfigError(`${name} must be one of ${setting.values.join(', ')} (got ${JSON.stringify(value)})`);
      return value;
    case 'url': {
      const url = httpUrl(name, value);
      const port = setting.sentTo ? refusedPort(new URL(url)) : undefined;
      if (port !== undefined) throw new ConfigError(`${name} names port ${port}, which webhooks are never sent to (a port fetch refuses): use another port (got ${JSON.stringify(displayUrl(url))})`);
      return url;
    }
    case 'text':
      return value;
    case 'custom':
      return setting.parse(value, name);
  }
}

/** Setting `name` from `source` (its default when not given), read as its declaration says. */
export function readSetting<N extends SettingName>(source: Source, name: N): SettingValue<N> {
  const value = givenOrDefault(source, name);
  return (value === undefined ? undefined : parseSetting(name, value)) as SettingValue<N>;
}

/**
 * Reads the configuration from `source` (the environment, with `cmi serve` flags laid over it), each
 * setting as SETTINGS declares it, then the rules between settings. Throws ConfigError on the first
 * bad value.
 */
export function loadConfig(source: Source = process.env): Config {
  const read = <N extends SettingName>(name: N): SettingValue<N> => readSetting(source, name);
  const given = (name: SettingName): boolean => source[name] !== undefined && source[name] !== '';

  const databaseUrl = read('DATABASE_URL');
  const logLevel = read('LOG_LEVEL');
  const host = read('HOST');
  const maxPerPage = read('CMI_MAX_PER_PAGE');
  // Unset, the default page size shrinks to fit a smaller maximum.
  const defaultPerPage = given('CMI_DEFAULT_PER_PAGE') ? read('CMI_DEFAULT_PER_PAGE') : Math.min(read('CMI_DEFAULT_PER_PAGE'), maxPerPage);
  if (defaultPerPage > maxPerPage) {
    throw new ConfigError(`CMI_DEFAULT_PER_PAGE must not exceed CMI_MAX_PER_PAGE (${defaultPerPage} > ${maxPerPage})`);
  }
  const trustProxy = read('CMI_TRUST_PROXY');
  const trustedProxies = read('CMI_TRUSTED_PROXIES') ?? [];
  if (trustProxy && trustedProxies.length > 0) {
    throw new ConfigError('CMI_TRUST_PROXY and CMI_TRUSTED_PROXIES must not both be set: CMI_TRUST_PROXY believes whichever peer connects, CMI_TRUSTED_PROXIES only the proxies it lists (set one)');
  }
  const maxConnections = read('CMI_MAX_CONNECTIONS');
  const adminPassword = read('CMI_ADMIN_PASSWORD');
  const port = read('PORT');
  const reportUrl = read('CMI_REPORT_WEBHOOK_URL');
  const alertUrl = read('CMI_ALERT_WEBHOOK_URL');
  const secret = read('CMI_WEBHOOK_SECRET') ?? '';
  if ((reportUrl !== undefined || alertUrl !== undefined) && [...secret].length < MIN_SECRET_CHARS) {
    throw new ConfigError(`CMI_WEBHOOK_SECRET must be set, at least ${MIN_SECRET_CHARS} characters, when CMI_REPORT_WEBHOOK_URL or CMI_ALERT_WEBHOOK_URL is`);
  }
  const metricsToken = read('CMI_METRICS_TOKEN');
  const syslogListen = (read('CMI_SYSLOG_LISTEN') ?? '').split(',').map((spec) => spec.trim()).filter((spec) => spec !== '');
  for (const spec of syslogListen) {
    try {
      parseListenSpec(spec);
    } catch (error) {
      throw new ConfigError(`CMI_SYSLOG_LISTEN: ${(error as Error).message}`);
    }
  }
  const syslogCert = read('CMI_SYSLOG_TLS_CERT');
  const syslogKey = read('CMI_SYSLOG_TLS_KEY');
  if (syslogListen.some((spec) => spec.startsWith('tls://')) && (syslogCert === undefined || syslogKey === undefined)) {
    throw new ConfigError('CMI_SYSLOG_TLS_CERT and CMI_SYSLOG_TLS_KEY must be set with a tls:// listener in CMI_SYSLOG_LISTEN');
  }
  const signInOrigins = (read('CMI_SIGN_IN_ORIGINS') ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== '').map((origin) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin.toLowerCase().replace(/\/$/, '')) {
      throw new ConfigError(`CMI_SIGN_IN_ORIGINS must be comma-separated origins such as https://billing.example.com (got ${JSON.stringify(origin)})`);
    }
    return parsed.origin;
  });
  const accountMail = accountMailSettings(read('CMI_SMTP_URL'), read('CMI_SMTP_PASSWORD'), read('CMI_MAIL_FROM'));
  const givenPublicUrl = read('CMI_PUBLIC_URL')?.replace(/\/+$/, '');
  const publicUrl = givenPublicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    host,
    port,
    databaseUrl,
    pool: {
      size: read('CMI_DB_POOL'),
      statementTimeoutMs: read('CMI_DB_STATEMENT_TIMEOUT'),
      timeQueries: metricsToken !== undefined || given('CMI_METRICS_PORT'),
    },
    defaultPerPage,
    maxPerPage,
    logLevel,
    bodyLimitBytes: read('CMI_BODY_LIMIT'),
    pageCacheBytes: read('CMI_PAGE_CACHE_BYTES'),
    requestTimeoutMs: read('CMI_REQUEST_TIMEOUT'),
    bodyTimeoutMs: read('CMI_BODY_TIMEOUT'),
    maxConnections,
    // Behind a proxy every connection comes from the proxy's address: unset, the cap is the total.
    maxConnectionsPerAddress: given('CMI_MAX_CONNECTIONS_PER_ADDRESS') || !(trustProxy || trustedProxies.length > 0) ? read('CMI_MAX_CONNECTIONS_PER_ADDRESS') : maxConnections,
    sessionMaxAgeSeconds: read('CMI_SESSION_MAX_AGE'),
    sessionIdleSeconds: read('CMI_SESSION_IDLE_TIMEOUT'),
    lockoutMaxFailures: read('CMI_LOCKOUT_MAX_FAILURES'),
    lockoutAddressMaxFailures: read('CMI_LOCKOUT_ADDRESS_MAX_FAILURES'),
    lockoutAccountMaxFailures: read('CMI_LOCKOUT_ACCOUNT_MAX_FAILURES'),
    lockoutWindowSeconds: read('CMI_LOCKOUT_WINDOW'),
    passwordPolicy: {
      minLength: read('CMI_PASSWORD_MIN_LENGTH'),
      requireUpper: read('CMI_PASSWORD_REQUIRE_UPPER'),
      requireLower: read('CMI_PASSWORD_REQUIRE_LOWER'),
      requireDigit: read('CMI_PASSWORD_REQUIRE_DIGIT'),
      requireSymbol: read('CMI_PASSWORD_REQUIRE_SYMBOL'),
      history: read('CMI_PASSWORD_HISTORY'),
      expiryMonths: read('CMI_PASSWORD_EXPIRY_MONTHS'),
      lockoutAttempts: read('CMI_PASSWORD_LOCKOUT_ATTEMPTS'),
      lockoutMinutes: read('CMI_PASSWORD_LOCKOUT_MINUTES'),
      refreshMs: read('CMI_PASSWORD_POLICY_REFRESH'),
    },
    authCacheSeconds: read('CMI_AUTH_CACHE_TTL'),
    trustProxy,
    trustedProxies,
    workers: read('CMI_WORKERS'),
    shutdownTimeoutSeconds: read('CMI_SHUTDOWN_TIMEOUT'),
    adminLogin: read('CMI_ADMIN_LOGIN'),
    adminEmail: read('CMI_ADMIN_EMAIL'),
    adminPassword,
    errors: {
      retentionDays: read('CMI_ERRORS_RETENTION_DAYS'),
      sample: { first: read('CMI_ERRORS_SAMPLE_FIRST'), latest: read('CMI_ERRORS_SAMPLE_LATEST') },
      ingestPerSecond: read('CMI_ERRORS_RATE_LIMIT'),
      maxPending: read('CMI_ERRORS_QUEUE'),
      spoolDirectory: read('CMI_SPOOL_DIR'),
    },
    auditRetentionDays: read('CMI_AUDIT_RETENTION_DAYS'),
    webhooks: {
      reportUrl,
      alertUrl,
      secret,
      publicUrl,
      timeoutMs: read('CMI_WEBHOOK_TIMEOUT'),
      reportBackoffMs: read('CMI_REPORT_BACKOFF'),
      retryBaseMs: read('CMI_WEBHOOK_RETRY_BASE'),
      retryForSeconds: read('CMI_WEBHOOK_RETRY_FOR'),
      pollIntervalMs: read('CMI_WEBHOOK_POLL_INTERVAL'),
      leaseMarginMs: read('CMI_WEBHOOK_LEASE_MARGIN'),
      spikeThreshold: read('CMI_ALERT_SPIKE_THRESHOLD'),
      spikeWindowSeconds: read('CMI_ALERT_SPIKE_WINDOW'),
      cooldownSeconds: read('CMI_ALERT_COOLDOWN'),
      alertRateLimit: read('CMI_ALERT_RATE_LIMIT'),
      allowedHosts: read('CMI_ALERT_ALLOWED_HOSTS') ?? NO_ALLOWED_HOSTS,
    },
    onappVersion: read('CMI_ONAPP_VERSION'),
    publicUrl: givenPublicUrl,
    accountMail,
    signInOrigins,
    syslog: {
      listen: syslogListen,
      tls: syslogCert !== undefined && syslogKey !== undefined ? { cert: syslogCert, key: syslogKey, ca: read('CMI_SYSLOG_TLS_CA') } : undefined,
    },
    openApi: read('CMI_OPENAPI'),
    metrics: { token: metricsToken, port: read('CMI_METRICS_PORT') },
    accessLog: read('CMI_ACCESS_LOG'),
    logFormat: read('CMI_LOG_FORMAT'),
    faultInjection: read('CMI_FAULT_INJECTION'),
  };
}
