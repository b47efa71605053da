/**
 * Why a database cannot be reached, told as one line with where it is (host:port or the file, never a
 * password), the cause and what to check: at start-up (the `cmi` command prints it) and during service
 * (the 503's log line). docs/operations.md#when-the-database-cannot-be-reached.
 */
export type ConnectionCause =
  | 'connection refused'
  | 'timed out'
  | 'authentication failed'
  | 'database missing'
  | 'host not found'
  | 'network unreachable'
  | 'connection lost'
  | 'cannot open';

export interface ConnectionFailure {
  readonly database: 'PostgreSQL' | 'SQLite';
  /** host:port (from DATABASE_URL, with PostgreSQL's defaults); SQLite: the file's absolute path. */
  readonly where: string;
  readonly cause: ConnectionCause;
  /** What the server said (`database "x" does not exist`), when it said something. */
  readonly said?: string;
}

const TO_CHECK: Record<ConnectionCause, (failure: ConnectionFailure) => string> = {
  'connection refused': ({ where }) => `check that PostgreSQL is running and listens on ${where} (the host and port of DATABASE_URL)`,
  'timed out': () => 'check that PostgreSQL answers there (not another service, not a firewall dropping packets), or raise CMI_DB_STATEMENT_TIMEOUT',
  'authentication failed': () => 'check the user and password of DATABASE_URL, that the role exists (createuser), and pg_hba.conf',
  'database missing': () => 'check the database name at the end of DATABASE_URL, or create it (createdb)',
  'host not found': () => 'check the host name of DATABASE_URL and DNS',
  'network unreachable': () => 'check the host of DATABASE_URL and the network route to it',
  'connection lost': () => 'check that PostgreSQL is still running (a restart or failover ends connections; cmi reconnects)',
  'cannot open': () => 'check that the path of DATABASE_URL is a file in a folder, and that the user cmi runs as may create and write both (under systemd, /var/lib/cmi)',
};

/** SQLite's file, or its folder, cannot be created or opened (a folder not writable, a path through a file). */
export function sqliteOpenFailure(error: unknown, path: string): ConnectionFailure {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '') : String(error);
  return { database: 'SQLite', where: path, cause: 'cannot open', said: typeof code === 'string' && !code.startsWith('SQLITE') ? `${code}: ${message}` : message };
}

/** The one line: `cannot connect to PostgreSQL at 127.0.0.1:5432: connection refused; check ...`. */
export function connectionFailureLine(failure: ConnectionFailure): string {
  const said = failure.said === undefined ? '' : ` (${failure.said})`;
  const verb = failure.database === 'SQLite' ? 'open the SQLite database' : 'connect to PostgreSQL';
  return `cannot ${verb} at ${failure.where}: ${failure.cause}${said}; ${TO_CHECK[failure.cause](failure)}`;
}

/** host:port of a postgres:// URL, with libpq's defaults (localhost, 5432); a host=... parameter wins. */
export function postgresAddress(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.searchParams.get('host') ?? (decodeURIComponent(parsed.hostname) || 'localhost');
    const port = parsed.searchParams.get('port') ?? (parsed.port || '5432');
    return `${host}:${port}`;
  } catch {
    return '(a DATABASE_URL that does not parse)';
  }
}

const CAUSE_OF_CODE: Record<string, ConnectionCause> = {
  ECONNREFUSED: 'connection refused',
  ETIMEDOUT: 'timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EHOSTUNREACH: 'network unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection lost',
  EPIPE: 'connection lost',
  // SQLSTATE: 28000 invalid authorization (a role that does not exist), 28P01 a wrong password.
  '28000': 'authentication failed',
  '28P01': 'authentication failed',
  '3D000': 'database missing',
  '57P01': 'connection lost',
  '57P02': 'connection lost',
  '57P03': 'connection lost',
};

/** Codes whose server message is worth repeating (it names the role or database, never a password). */
const SERVER_SAYS = new Set(['28000', '28P01', '3D000']);

/**
 * The connection failure an error of `pg` is, or undefined when it is not one (a statement timeout, a
 * constraint). `password` is never repeated, whatever the server said.
 */
export function postgresConnectionFailure(error: unknown, url: string): ConnectionFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  let cause = typeof code === 'string' ? CAUSE_OF_CODE[code] : undefined;
  if (cause === undefined && typeof code === 'string' && code.startsWith('08')) cause = 'connection lost';
  if (cause === undefined && /timeout exceeded when trying to connect|due to connection timeout/.test(error.message)) cause = 'timed out';
  if (cause === undefined && /^Connection terminated|Client has encountered a connection error/.test(error.message)) cause = 'connection lost';
  if (cause === undefined) return undefined;
  let said = typeof code === 'string' && SERVER_SAYS.has(code) ? error.message.slice(0, 200) : undefined;
  const password = passwordOf(url);
  if (said !== undefined && password !== '' && said.includes(password)) said = undefined;
  return { database: 'PostgreSQL', where: postgresAddress(url), cause, ...(said === undefined ? {} : { said }) };
}

function passwordOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return '';
  }
}

/** The connection failure `error` carries (itself or its causes), if any. */
export function connectionFailureOf(error: unknown): ConnectionFailure | undefined {
  for (let seen = error, depth = 0; seen instanceof Error && depth < 5; seen = seen.cause, depth++) {
    const failure = (seen as { connectionFailure?: ConnectionFailure }).connectionFailure;
    if (failure !== undefined) return failure;
  }
  return undefined;
}
