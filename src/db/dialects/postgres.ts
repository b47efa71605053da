import { type CreateTableBuilder, Kysely, type LogEvent, PostgresDialect, sql } from 'kysely';
import { loadPg } from './pg-module.js';
import type { Schema } from '../schema.js';
import type { CachedData, WriteCounter } from '../write-counter.js';
import { type Connection, type Dialect, likeContaining } from './dialect.js';
import { CHANGE_CHANNELS, changeListener } from './postgres-change-listener.js';
import { guardedPool } from './postgres-pool.js';

/** How much longer than statement_timeout a query may take before the client gives up on the server. */
const CLIENT_GRACE_MS = 1000;

/** The trigger function and trigger-name suffix that notify changes to each kind of cached data (migrations 003, 011, 012). */
const NOTIFIERS: Record<CachedData, { functionName: string; triggerSuffix: string }> = {
  users: { functionName: 'cmi_data_changed', triggerSuffix: 'changed' },
  tracker: { functionName: 'cmi_tracker_changed', triggerSuffix: 'tracker_changed' },
};

/** An arbitrary, fixed advisory-lock key for changes that could leave no active administrator. */
const ADMINISTRATORS_LOCK = 7_302_114;

/**
 * The GIN index of pg_trgm trigrams over error_search, creating the extension (in `public`) when the
 * database allows (docs/operations.md#running-on-postgresql); when it does not, or the extension's
 * schema is not this user's to use, the migration goes on without the index. Never created in cmi's
 * own schema: dropping that would drop the extension from every other schema's index.
 */
async function createTrigramIndex(db: Kysely<unknown>): Promise<void> {
  await sql`savepoint trigrams`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);
    const found = await sql<{ schema: string }>`
      select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace
      where e.extname = 'pg_trgm'`.execute(db);
    const operators = sql.raw(`"${(found.rows[0]?.schema ?? 'public').replaceAll('"', '""')}".gin_trgm_ops`);
    await sql`create index error_search_trigrams on error_search using gin (error_class ${operators}, message ${operators})`.execute(db);
    await sql`release savepoint trigrams`.execute(db);
  } catch {
    await sql`rollback to savepoint trigrams`.execute(db);
  }
}

/** PostgreSQL through a pool of `pg` connections; other processes' changes arrive by LISTEN. */
export function postgresDialect(url: string): Dialect {
  return {
    name: 'postgres',
    target: url,
    choose: (variants) => variants.postgres,
    lowerFunction: 'lower',

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

    /** The connection's current schema, named explicitly: kysely would otherwise take such tables in any schema as its own. */
    async migrationSchema(db) {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
      return rows[0]?.schema;
    },

    // kysely already runs each PostgreSQL migration in a transaction.
    atomically: (db, build) => build(db),

    addIdColumn: <T extends string>(table: CreateTableBuilder<T, never>) =>
      table.addColumn('id', 'integer', (column) => column.primaryKey().generatedByDefaultAsIdentity()),

    keyOrderedTable: '',

    /** Code 23505 with the detail `Key (login)=(bob) already exists.` -> `login`. */
    uniqueViolationColumn(error) {
      if (!(error instanceof Error) || (error as { code?: unknown }).code !== '23505') return undefined;
      return /^Key \((\w+)\)/.exec(String((error as { detail?: unknown }).detail))?.[1];
    },

    /**
     * PostgreSQL checks the "another active administrator" guard against a snapshot per statement, so
     * two administrators suspending each other at once could both succeed without this lock.
     */
    async serializeAdministratorChanges(trx) {
      await sql`select pg_advisory_xact_lock(${ADMINISTRATORS_LOCK})`.execute(trx);
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

    /**
     * `error_search` (migration 009): each error's lower-cased class and message, kept in step by
     * triggers (statement level over transition tables for inserts and deletes, as migration 007's;
     * per row for a changed text), with a pg_trgm GIN index where the database lets cmi create the
     * extension. Without it the narrow table is still read instead of every error's whole row.
     */
    async createErrorSearch(db, migration) {
      if (migration !== '009') return;
      const run = (statement: string) => sql.raw(statement).execute(db);
      const fn = (name: string, body: string) => run(`create or replace function ${name}() returns trigger language plpgsql as $$ begin ${body} return null; end $$`);
      await run('create table error_search (id bigint primary key, error_class text not null, message text not null)');
      await fn('error_search_added', 'insert into error_search (id, error_class, message) select id, lower(error_class), lower(message) from added;');
      await fn('error_search_removed', 'delete from error_search where id in (select id from removed);');
      await fn('error_search_changed', 'update error_search set error_class = lower(new.error_class), message = lower(new.message) where id = new.id;');
      await fn('error_search_truncated', 'delete from error_search;');
      await run('create trigger infrastructure_errors_search_insert after insert on infrastructure_errors referencing new table as added for each statement execute function error_search_added()');
      await run('create trigger infrastructure_errors_search_delete after delete on infrastructure_errors referencing old table as removed for each statement execute function error_search_removed()');
      await run(`create trigger infrastructure_errors_search_update after update of error_class, message on infrastructure_errors
        for each row when (old.error_class <> new.error_class or old.message <> new.message) execute function error_search_changed()`);
      await run('create trigger infrastructure_errors_search_truncate after truncate on infrastructure_errors for each statement execute function error_search_truncated()');
      await run('insert into error_search (id, error_class, message) select id, lower(error_class), lower(message) from infrastructure_errors');
      await createTrigramIndex(db);
    },

    // Any text, few matches or many: error_search's statistics tell the planner how many match, and
    // it walks the list or reads the matches as they say. (Trigrams find a text of 3 characters or
    // more; a shorter one reads the narrow table whole, still less than the errors.)
    errorIdsContaining: (folded) => {
      const pattern = likeContaining(folded);
      return sql<{ id: number }>`select id from error_search where error_class like ${pattern} escape '\\' or message like ${pattern} escape '\\'`;
    },

    async refreshStatistics(db) {
      await sql`vacuum analyze`.execute(db);
    },
  };
}
