import { type Dialect, Kysely, type LogEvent, PostgresDialect } from 'kysely';
import type { WriteCounter } from '../change-notifications/write-counter.js';
import { postgresDataVersions } from '../change-notifications/postgres.js';
import type { Connection, Connector, PoolSettings } from './connection.js';
import { loadPg } from './pg-module.js';
import { CurrentSchemaIntrospector, PostgresSchemaLockAdapter } from './postgres-migrator.js';
import { guardedPool } from './postgres-pool.js';

/** How much longer than statement_timeout a query may take before the client gives up on the server. */
const CLIENT_GRACE_MS = 1000;

/** PostgreSQL's type id of bigint (int8). */
const INT8_OID = 20;

/** kysely's PostgreSQL dialect, its Migrator's lock and introspection on the current schema only (postgres-migrator.ts). */
const currentSchemaOnly = (dialect: PostgresDialect): Dialect => ({
  createAdapter: () => new PostgresSchemaLockAdapter(),
  createDriver: () => dialect.createDriver(),
  createQueryCompiler: () => dialect.createQueryCompiler(),
  createIntrospector: (db) => new CurrentSchemaIntrospector(db),
});

/** PostgreSQL at `url`, through a pool of `pg` connections; other processes' changes arrive by LISTEN. */
export function postgresConnector(url: string): Connector {
  return {
    open<DB>(pool: PoolSettings, writes: WriteCounter): Connection<DB> {
      const driver = loadPg();
      const connections = new driver.Pool({
        connectionString: url,
        max: pool.size,
        statement_timeout: pool.statementTimeoutMs,
        connectionTimeoutMillis: pool.statementTimeoutMs,
        // bigint (int8: counts, counters, count(*)) read as a JS number, as SQLite's integers are,
        // instead of pg's string: exact up to 2^53, far beyond any count (migration 014).
        types: {
          getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
            oid === INT8_OID && format !== 'binary' ? Number : driver.types.getTypeParser(oid, format)) as typeof driver.types.getTypeParser,
        },
      });
      // An idle connection the server ends (restart, failover) is dropped by the pool; without a
      // listener its error would end the process. The next query opens a new connection.
      connections.on('error', () => {});
      // The server processes of this pool's connections: their notifications are this process's own
      // writes, which its credential cache has dropped already (change-notifications/postgres.ts).
      const ownBackends = new Set<number>();
      const backendOf = (client: object) => (client as { processID?: number | null }).processID;
      connections.on('connect', (client) => {
        const id = backendOf(client);
        if (typeof id === 'number') ownBackends.add(id);
      });
      connections.on('remove', (client) => {
        const id = backendOf(client);
        if (typeof id === 'number') ownBackends.delete(id);
      });
      const versions = postgresDataVersions(url, writes, driver, { statementTimeoutMs: pool.statementTimeoutMs, ownBackends });
      let observeQuery: ((seconds: number) => void) | undefined;
      const db = new Kysely<DB>({
        plugins: [writes],
        dialect: currentSchemaOnly(new PostgresDialect({ pool: guardedPool(connections, pool.statementTimeoutMs + CLIENT_GRACE_MS, url) })),
        // kysely times a query only when given a log function: only with the metrics on.
        ...(pool.timeQueries ? { log: (event: LogEvent) => observeQuery?.(event.queryDurationMillis / 1000) } : {}),
      });
      return {
        db,
        dataVersions: versions.dataVersions,
        close: async () => {
          await versions.close();
          await db.destroy();
        },
        poolUse: () => ({ total: connections.totalCount, idle: connections.idleCount, waiting: connections.waitingCount }),
        ...(pool.timeQueries ? { onQueryTime: (observer: (seconds: number) => void) => { observeQuery = observer; } } : {}),
      };
    },
  };
}
