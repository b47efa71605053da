import { availableParallelism } from 'node:os';
import { type PoolSettings, parseDatabaseUrl } from './store/database.js';

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
  sessionMaxAgeSeconds: number;
  sessionIdleSeconds: number;
  /** Failed logins allowed per login and per address within lockoutWindowSeconds. */
  lockoutMaxFailures: number;
  lockoutWindowSeconds: number;
  /** How long a verified credential is trusted without rechecking, in seconds (0 turns caching off). */
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
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** A bad setting. The message is one line naming the variable, fit to print as is. */
export class ConfigError extends Error {}

type Source = Readonly<Record<string, string | undefined>>;

function integer(source: Source, name: string, fallback: number, min: number, max: number): number {
  const raw = source[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)})`);
  }
  return Number(raw);
}

function flag(source: Source, name: string): boolean {
  const raw = source[name];
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${name} must be true, false, 1 or 0 (got ${JSON.stringify(raw)})`);
}

function text(source: Source, name: string, fallback: string): string {
  const raw = source[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

/**
 * Reads the configuration from `source` (the environment, with `cmi serve` flags laid over it).
 * Throws ConfigError on the first bad value.
 */
export function loadConfig(source: Source = process.env): Config {
  const databaseUrl = text(source, 'DATABASE_URL', 'sqlite:./data/cmi.sqlite3');
  try {
    parseDatabaseUrl(databaseUrl);
  } catch (error) {
    const shown = databaseUrl.replace(/\/\/[^@/]*@/, '//***@');
    throw new ConfigError(`DATABASE_URL ${(error as Error).message} (got ${JSON.stringify(shown)})`);
  }
  const logLevel = text(source, 'LOG_LEVEL', 'info');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(logLevel)})`);
  }
  const host = text(source, 'HOST', '127.0.0.1');
  if (!/^[A-Za-z0-9.:_-]{1,253}$/.test(host)) throw new ConfigError(`HOST must be a host name or IP address (got ${JSON.stringify(host)})`);
  const maxPerPage = integer(source, 'CMI_MAX_PER_PAGE', 1000, 1, 100_000);
  const defaultPerPage = integer(source, 'CMI_DEFAULT_PER_PAGE', Math.min(25, maxPerPage), 1, 100_000);
  if (defaultPerPage > maxPerPage) {
    throw new ConfigError(`CMI_DEFAULT_PER_PAGE must not exceed CMI_MAX_PER_PAGE (${defaultPerPage} > ${maxPerPage})`);
  }
  const adminPassword = source.CMI_ADMIN_PASSWORD;
  if (adminPassword !== undefined && adminPassword !== '' && [...adminPassword].length < 8) {
    throw new ConfigError('CMI_ADMIN_PASSWORD must be at least 8 characters');
  }
  return {
    host,
    port: integer(source, 'PORT', 3000, 0, 65_535),
    databaseUrl,
    pool: {
      size: integer(source, 'CMI_DB_POOL', 10, 1, 1000),
      statementTimeoutMs: integer(source, 'CMI_DB_STATEMENT_TIMEOUT', 5000, 100, 3_600_000),
    },
    defaultPerPage,
    maxPerPage,
    logLevel: logLevel as LogLevel,
    bodyLimitBytes: integer(source, 'CMI_BODY_LIMIT', 1_048_576, 1024, 104_857_600),
    sessionMaxAgeSeconds: integer(source, 'CMI_SESSION_MAX_AGE', 12 * 3600, 60, 30 * 86_400),
    sessionIdleSeconds: integer(source, 'CMI_SESSION_IDLE_TIMEOUT', 30 * 60, 60, 30 * 86_400),
    lockoutMaxFailures: integer(source, 'CMI_LOCKOUT_MAX_FAILURES', 10, 1, 1_000_000),
    lockoutWindowSeconds: integer(source, 'CMI_LOCKOUT_WINDOW', 15 * 60, 1, 86_400),
    authCacheSeconds: integer(source, 'CMI_AUTH_CACHE_TTL', 5, 0, 300),
    trustProxy: flag(source, 'CMI_TRUST_PROXY'),
    workers: source.CMI_WORKERS === 'auto' ? availableParallelism() : integer(source, 'CMI_WORKERS', 1, 1, 64),
    shutdownTimeoutSeconds: integer(source, 'CMI_SHUTDOWN_TIMEOUT', 10, 0, 3600),
    adminLogin: text(source, 'CMI_ADMIN_LOGIN', 'admin'),
    adminEmail: text(source, 'CMI_ADMIN_EMAIL', 'admin@localhost'),
    adminPassword: adminPassword === '' ? undefined : adminPassword,
  };
}
