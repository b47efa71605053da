import { Kysely, type LogEvent, PostgresDialect, sql } from 'kysely';
import { loadPg } from './connection/pg-module.js';
import type { Schema } from '../schema.js';
import type { CachedData, WriteCounter } from '../write-counter.js';
import type { Connection, Dialect } from './dialect.js';
import { CHANGE_CHANNELS, changeListener } from './change-notifications/postgres-listener.js';
import { guardedPool } from './connection/postgres-pool.js';
import { postgresConstraints } from './constraints/postgres.js';
import { postgresMigrations } from './migrations/postgres.js';
import { postgresStatistics } from './statistics/postgres.js';
import { postgresTables } from './tables/postgres.js';
import { postgresText } from './text/postgres.js';

/** How much longer than statement_timeout a query may take before the client gives up on the server. */
const CLIENT_GRACE_MS = 1000;

/** The trigger function and trigger-name suffix that notify changes to each kind of cached data (migrations 003, 011, 012). */
const NOTIFIERS: Record<CachedData, { functionName: string; triggerSuffix: string }> = {
  users: { functionName: 'cmi_data_changed', triggerSuffix: 'changed' },
  tracker: { functionName: 'cmi_tracker_changed', triggerSuffix: 'tracker_changed' },
};

/** PostgreSQL through a pool of `pg` connections; other processes' changes arrive by LISTEN. */
export function postgresDialect(url: string): Dialect {
  return {
    name: 'postgres',
    target: url,
    choose: (variants) => variants.postgres,
    text: postgresText,
    constraints: postgresConstraints,
    tables: postgresTables,
    migrations: postgresMigrations,
    statistics: postgresStatistics,
    refreshStatistics: (db) => postgresStatistics.refresh(db),

    open(pool, writes: WriteCounter): Connection {
      // Connected on first use: commands that only write (migrate, users ...) never listen.
      let listener: ReturnType<typeof changeListener> | undefined;
      const connections = new (loadPg().Pool)({
        connectionString: url,
        max: pool.size,
        statement_timeout: pool.statementTimeoutMs,
        connectionTimeoutMillis: pool.statementTimeoutMs,
      });
      // An idle connection the server ends (restart, failover) is dropped by the pool; without a
      // listener its error would end the process. The next query opens a new connection.
      connections.on('error', () => {});
      let observeQuery: ((seconds: number) => void) | undefined;
      const db = new Kysely<Schema>({
        plugins: [writes],
        dialect: new PostgresDialect({ pool: guardedPool(connections, pool.statementTimeoutMs + CLIENT_GRACE_MS) }),
        // kysely times a query only when given a log function: only with the metrics on.
        ...(pool.timeQueries ? { log: (event: LogEvent) => observeQuery?.(event.queryDurationMillis / 1000) } : {}),
      });
      return {
        db,
        dataVersions: {
          users: () => {
            listener ??= changeListener(url);
            const changes = listener.version('users');
            return changes === undefined ? undefined : `${changes}:${writes.counts.users}`;
          },
          tracker: () => {
            listener ??= changeListener(url);
            const changes = listener.version('tracker');
            return changes === undefined ? undefined : `${changes}:${writes.counts.tracker}`;
          },
        },
        close: async () => {
          await listener?.close();
          await db.destroy();
        },
        poolUse: () => ({ total: connections.totalCount, idle: connections.idleCount, waiting: connections.waitingCount }),
        ...(pool.timeQueries ? { onQueryTime: (observer: (seconds: number) => void) => { observeQuery = observer; } } : {}),
      };
    },

    /**
     * Every statement that changes one of `tables` notifies the channel of `data` (CHANGE_CHANNELS) with
     * the schema as payload. PostgreSQL folds the same notification sent again in one transaction into
     * one, so a batch of error reports is one notification however many statements it runs.
     */
    async createChangeNotifications(db, tables, data) {
      await this.createChangeNotificationFunction(db, data);
      const { functionName, triggerSuffix } = NOTIFIERS[data];
      for (const table of tables) {
        await sql`
          create trigger ${sql.raw(`${table}_${triggerSuffix}`)}
          after insert or update or delete or truncate on ${sql.table(table)}
          for each statement execute function ${sql.raw(functionName)}()`.execute(db);
      }
    },

    /**
     * The trigger function behind createChangeNotifications. The payload is the changed table's schema
     * (TG_TABLE_SCHEMA), which listeners compare with their own: a write from a session whose
     * search_path differs (psql as a DBA) is still heard. Before migration 012 it sent the writer's
     * current_schema().
     */
    async createChangeNotificationFunction(db, data) {
      const { functionName } = NOTIFIERS[data];
      await sql`
        create or replace function ${sql.raw(functionName)}() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${sql.lit(CHANGE_CHANNELS[data])}, TG_TABLE_SCHEMA);
          return null;
        end $$`.execute(db);
    },

    async dropChangeNotifications(db, tables) {
      for (const table of tables) await sql`drop trigger if exists ${sql.raw(`${table}_changed`)} on ${sql.table(table)}`.execute(db);
    },

  };
}
