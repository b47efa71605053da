import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { postgresAddress, postgresConnectionFailure } from './connection-failure.js';
import { DatabaseUnavailable, type DatabaseUnavailableReason } from './database-unavailable.js';

/** Network errors that mean the server cannot be reached. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/**
 * Why PostgreSQL cannot serve now, from an error of `pg`; undefined for anything else (a fault, or a
 * constraint the caller handles). SQLSTATE classes 08 (connection), 53 (resources: disk full, too
 * many connections) and 57 (operator intervention: shutdown, statement timeout); 25006, a read-only
 * server; 28000, 28P01 and 3D000, a connection refused for its role, password or database name.
 */
export function unavailableReason(error: unknown): DatabaseUnavailableReason | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNREACHABLE.has(code) || code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return 'the database cannot be reached';
    if (code === '28000' || code === '28P01' || code === '3D000') return 'the database cannot be reached';
    if (code === '53100') return 'the database is full';
    if (code.startsWith('53')) return 'the database is out of resources';
    if (code === '57014') return 'the database did not answer in time';
    if (code === '25006') return 'the database refuses writes';
  }
  // Connected, but no answer to the start-up (a frozen server): as a query that got none.
  if (/timeout exceeded when trying to connect|due to connection timeout/.test(error.message)) return 'the database did not answer in time';
  if (/^Connection terminated|Client has encountered a connection error/.test(error.message)) return 'the database cannot be reached';
  return undefined;
}

/** `error` as DatabaseUnavailable when it is one, carrying where the database at `url` is and why it cannot be reached. */
const asUnavailable = (error: unknown, url: string): unknown => {
  const reason = unavailableReason(error);
  return reason === undefined ? error : new DatabaseUnavailable(reason, 5, postgresConnectionFailure(error, url));
};

/**
 * The pg pool as kysely sees it, with a limit on every query measured here, not by the server: a
 * server that hangs (frozen, partitioned) cannot enforce its own statement_timeout. A query that
 * outlasts `queryTimeoutMs` fails with 503 and its connection is destroyed, not reused; acquiring a
 * connection is bounded by the pool's connectionTimeoutMillis. docs/operations.md#when-the-database-is-sick.
 */
export function guardedPool(pool: pg.Pool, queryTimeoutMs: number, url: string): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect().catch((error: unknown) => {
        throw asUnavailable(error, url);
      });
      let broken = false;
      const query = <R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> => {
        // A connection given up on (kysely's rollback comes next): no waiting behind the hung query.
        if (broken) return Promise.reject(new DatabaseUnavailable('the database cannot be reached', 5));
        const running = client.query(sql, parameters as unknown[]) as unknown as Promise<PostgresQueryResult<R>>;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => {
            broken = true;
            reject(new DatabaseUnavailable('the database did not answer in time', 5, { database: 'PostgreSQL', where: postgresAddress(url), cause: 'timed out' }));
          }, queryTimeoutMs);
        });
        return Promise.race([running, timeout])
          .catch((error: unknown) => {
            // The abandoned query fails when its connection is destroyed: nothing waits for that.
            running.catch(() => {});
            // A connection that lost its server goes; one the server refused a write on stays.
            if (unavailableReason(error) === 'the database cannot be reached') broken = true;
            throw asUnavailable(error, url);
          })
          .finally(() => clearTimeout(timer));
      };
      return {
        query: query as PostgresPoolClient['query'],
        release: () => client.release(broken),
      };
    },
    end: () => pool.end(),
  };
}
