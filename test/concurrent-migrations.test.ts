import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { migrateToLatest, openDatabase, schemaState } from '../src/db/database.js';
import { allMigrations } from '../src/db/migrations/index.js';
import { MIGRATION_NAMES } from '../src/db/migrations/names.js';
import { dialectFor } from '../src/db/database-url.js';
import { type Finished, type RunningServer, runCmiProcess, startServer } from './support/cli.js';
import { type FreshDatabase, freshDatabase, onPostgres } from './support/database.js';

// Processes started together on a fresh database migrate it once between them: the migration run
// takes a lock (SQLite's write lock, PostgreSQL's advisory lock) and reads what is applied only once
// it holds it, so every process comes up (docs/operations.md#migrations-run-one-at-a-time).

const ADMIN = `Basic ${Buffer.from('admin:first-admin-password').toString('base64')}`;
const EVERY_MIGRATION = [
  '001_initial', '002_sessions_and_lockout', '003_change_notifications', '004_row_blocks', '005_login_addresses', '006_error_tracker',
  '007_error_counts', '008_error_search', '009_error_search_postgres', '010_webhook_deliveries', '011_tracker_change_notifications',
  '012_notify_table_schema', '013_login_lower_index', '014_wide_counters', '015_credential_changes', '016_roles', '017_billing_buckets', '018_user_buckets', '019_role_credential_changes', '020_user_groups', '021_user_api_keys', '022_ingest_keys', '023_error_triage', '024_audit_log', '025_alert_routing', '026_statement_error_counts', '027_error_list_indexes', '028_error_pair_counts', '029_alert_rule_changes', '030_users_data_changes', '031_triage_counts', '032_bulk_update_costs', '033_two_factor', '034_password_policy', '035_user_white_lists', '036_last_access_log', '037_role_requires_two_factor', '038_identity_providers', '039_ingest_key_kinds', '040_log_sources', '041_log_rules', '043_error_search_backtrace', '047_releases', '048_changes', '049_saved_searches',
];

/** What a migration run prints when it finds the lock held, or nothing when it took it at once. */
const WAITING = ['', 'cmi: waiting for the database: another process is migrating it or holds its lock\n'];

const envOf = (own: FreshDatabase) => ({ DATABASE_URL: own.url, CMI_ADMIN_LOGIN: 'admin', CMI_ADMIN_PASSWORD: 'first-admin-password' });

/** The migrations the database records as applied, in order, and how many users it holds. */
async function stateOf(own: FreshDatabase): Promise<{ applied: string[]; users: number }> {
  if (!onPostgres) {
    const db = new SQLite(dialectFor(own.url).target, { fileMustExist: true });
    db.pragma('query_only = ON');
    try {
      const applied = db.prepare('select name from kysely_migration order by name').pluck().all() as string[];
      return { applied, users: db.prepare('select count(*) from users').pluck().get() as number };
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: own.url });
  await client.connect();
  try {
    const applied = (await client.query<{ name: string }>('select name from kysely_migration order by name')).rows.map((row) => row.name);
    const users = Number((await client.query<{ count: string }>('select count(*) from users')).rows[0]?.count);
    return { applied, users };
  } finally {
    await client.end();
  }
}

async function versionOf(server: RunningServer): Promise<[number, string]> {
  const res = await fetch(`${server.baseUrl}/version.json`, { headers: { authorization: ADMIN } });
  return [res.status, await res.text()];
}

/** Both settle: the servers that came up are stopped even when the other did not. */
async function bothStarted<A, B>(first: Promise<A>, second: Promise<B>, stop: (started: A | B) => Promise<unknown>): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled([first, second]);
  const started = [a, b].flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  if (a.status === 'rejected' || b.status === 'rejected') {
    for (const value of started) await stop(value);
    throw a.status === 'rejected' ? a.reason : (b as PromiseRejectedResult).reason;
  }
  return [a.value, b.value];
}

const stopServer = async (started: unknown) => {
  if (typeof started === 'object' && started !== null && 'stop' in started) await (started as RunningServer).stop();
};

describe('processes migrating one fresh database at once', () => {
  it('two cmi serve started together both come up and answer, the migrations applied once', async () => {
    const own = await freshDatabase();
    try {
      const [one, two] = await bothStarted(startServer(envOf(own)), startServer(envOf(own)), stopServer);
      try {
        assert.deepEqual(await versionOf(one), [200, '{"version":"6.7"}']);
        assert.deepEqual(await versionOf(two), [200, '{"version":"6.7"}']);
        // One of them created the administrator, the other found it.
        const created = [one, two].filter((server) => /Created administrator "admin"/.test(server.output));
        assert.equal(created.length, 1, one.output + two.output);
      } finally {
        assert.equal(await one.stop(), 0);
        assert.equal(await two.stop(), 0);
      }
      assert.deepEqual(await stateOf(own), { applied: EVERY_MIGRATION, users: 1 });
    } finally {
      await own.drop();
    }
  });

  it('cmi migrate beside cmi serve, started together: the migration succeeds and the server answers', async () => {
    const own = await freshDatabase();
    try {
      // Migrations of two processes at once (the point of this file): cmi migrate as its own process (test/support/cli.ts).
      const [server, migrated] = await bothStarted(startServer(envOf(own)), runCmiProcess(['migrate'], envOf(own)), stopServer);
      try {
        assert.equal(migrated.code, 0, migrated.stderr);
        // Whichever took the lock first applied them all; the other found the database up to date.
        assert.ok(['Database is up to date\n', `Applied ${EVERY_MIGRATION.join(', ')}\n`].includes(migrated.stdout), migrated.stdout);
        assert.deepEqual(await versionOf(server), [200, '{"version":"6.7"}']);
      } finally {
        assert.equal(await server.stop(), 0);
      }
      assert.deepEqual(await stateOf(own), { applied: EVERY_MIGRATION, users: 1 });
    } finally {
      await own.drop();
    }
  });

  it('two cmi migrate started together: one applies every migration, the other finds the database up to date', async () => {
    const own = await freshDatabase();
    try {
      // Two processes, each its own connection and lock, as two operators' (test/support/cli.ts).
      const runs: Finished[] = await Promise.all([runCmiProcess(['migrate'], envOf(own)), runCmiProcess(['migrate'], envOf(own))]);
      // Each either took the lock at once or said it waited for it.
      for (const run of runs) assert.deepEqual([run.code, WAITING.includes(run.stderr)], [0, true], run.stderr);
      assert.deepEqual(runs.map((run) => run.stdout).sort(), [`Applied ${EVERY_MIGRATION.join(', ')}\n`, 'Database is up to date\n']);
      assert.deepEqual(await stateOf(own), { applied: EVERY_MIGRATION, users: 0 });
    } finally {
      await own.drop();
    }
  });

  it('two cmi serve started while another holds the lock past the statement timeout both come up once it is let go', async () => {
    const own = await freshDatabase();
    // The lock another process holds as both start: on SQLite a connection in `begin exclusive` (a
    // backup, a sqlite3 shell); on PostgreSQL a session holding this schema's migration lock (a
    // `cmi migrate` of its own). It is let go only once both servers have said they wait for it, that
    // is once each has waited a whole statement timeout and tries again.
    const release = await holdLock(own);
    let released = false;
    try {
      const env = { ...envOf(own), CMI_DB_STATEMENT_TIMEOUT: '1000' };
      const waiting = [false, false];
      let bothWait: () => void = () => {};
      const bothWaiting = new Promise<void>((resolve) => (bothWait = resolve));
      const start = (index: number) =>
        startServer(env, [], {
          onStderr: (stderr) => {
            if (stderr.includes(WAITING[1] as string)) waiting[index] = true;
            if (waiting.every(Boolean)) bothWait();
          },
        });
      const starting = [start(0), start(1)];
      // Neither listens while the lock is held; a server that gave up instead fails the test here.
      const notYet = starting.map((server) =>
        server.then(() => {
          if (!released) throw new Error('listened while the lock was held');
        }),
      );
      for (const check of notYet) check.catch(() => {});
      try {
        await Promise.race([bothWaiting, ...notYet]);
      } catch (error) {
        // One gave up: the other is stopped once it settles, so nothing outlives the test.
        await release();
        released = true;
        for (const result of await Promise.allSettled(starting)) if (result.status === 'fulfilled') await result.value.stop();
        throw error;
      }
      await release();
      released = true;
      const [one, two] = await bothStarted(starting[0] as Promise<RunningServer>, starting[1] as Promise<RunningServer>, stopServer);
      try {
        assert.deepEqual(await versionOf(one), [200, '{"version":"6.7"}']);
        assert.deepEqual(await versionOf(two), [200, '{"version":"6.7"}']);
        assert.deepEqual([one.errors, two.errors], [WAITING[1], WAITING[1]]);
      } finally {
        assert.equal(await one.stop(), 0);
        assert.equal(await two.stop(), 0);
      }
      assert.deepEqual(await stateOf(own), { applied: EVERY_MIGRATION, users: 1 });
    } finally {
      if (!released) await release();
      await own.drop();
    }
  });

  // In one process the two runs' statements interleave at every await, in the same order each time:
  // without the lock both read that nothing is applied, and the second's 001 finds the first's tables.
  it('two connections migrating at once: one applies every migration, the other none', async () => {
    const own = await freshDatabase();
    const databases = [0, 1].map(() => openDatabase(loadConfig({ DATABASE_URL: own.url })));
    try {
      const applied = await Promise.all(databases.map((database) => migrateToLatest(database)));
      assert.deepEqual(applied.map((names) => names.length).sort(), [0, EVERY_MIGRATION.length]);
      assert.deepEqual(applied.flat(), EVERY_MIGRATION);
      assert.deepEqual(await stateOf(own), { applied: EVERY_MIGRATION, users: 0 });
    } finally {
      for (const database of databases) await database.close();
      await own.drop();
    }
  });

  // kysely's own introspection read every schema's tables, calling functions on each schema's name,
  // so a schema dropped meanwhile by anyone else on the database failed the run. Without the fix most
  // of these runs failed with `schema "cmi_churn_..." does not exist`; with it none can.
  it('migrates while other schemas of the database are created and dropped', { skip: !onPostgres && 'PostgreSQL only: SQLite has one schema' }, async () => {
    const churn = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await churn.connect();
    let churning = true;
    const churned = (async () => {
      for (let i = 0; churning; i++) {
        const schema = `cmi_churn_${process.pid}_${i}`;
        await churn.query(`create schema ${schema}; create table ${schema}.t (id serial primary key, name text)`);
        await churn.query(`drop schema ${schema} cascade`);
      }
    })();
    const outcomes: string[] = [];
    try {
      for (let run = 0; run < 5; run++) {
        const own = await freshDatabase();
        const database = openDatabase(loadConfig({ DATABASE_URL: own.url }));
        try {
          outcomes.push((await migrateToLatest(database)).join(', '));
        } catch (error) {
          outcomes.push(String(error));
        } finally {
          await database.close();
          await own.drop();
        }
      }
    } finally {
      churning = false;
      await churned;
      await churn.end();
    }
    assert.deepEqual(outcomes, Array.from({ length: 5 }, () => EVERY_MIGRATION.join(', ')));
  });
});

describe('a database with every migration applied', () => {
  // A start reads the names applied and, finding every one, loads no migration and takes no lock:
  // a backup or another process holding it no longer delays it (docs/operations.md#migrations-run-one-at-a-time).
  it('a migration run finds nothing to do without waiting for the lock another holds', async () => {
    const own = await freshDatabase();
    const database = openDatabase(loadConfig({ DATABASE_URL: own.url, CMI_DB_STATEMENT_TIMEOUT: '1000' }));
    try {
      assert.deepEqual(await migrateToLatest(database), EVERY_MIGRATION);
      const release = await holdLock(own);
      try {
        const waits: string[] = [];
        assert.deepEqual(await migrateToLatest(database, { lockWaitMs: 0, onWait: (line) => waits.push(line) }), []);
        assert.deepEqual(waits, []);
        assert.deepEqual(await schemaState(database), { version: EVERY_MIGRATION.at(-1), pending: [], latest: EVERY_MIGRATION.at(-1) });
      } finally {
        await release();
      }
    } finally {
      await database.close();
      await own.drop();
    }
  });

  it('names every migration the migrator runs, in order', () => {
    const dialect = dialectFor(onPostgres ? 'postgres://cmi@127.0.0.1/cmi' : 'sqlite::memory:');
    assert.deepEqual([...MIGRATION_NAMES], Object.keys(allMigrations(dialect)));
    assert.deepEqual([...MIGRATION_NAMES], EVERY_MIGRATION);
  });
});

/** The first half of the migrations' advisory lock key on PostgreSQL (src/db/dialects/connection/postgres-migrator.ts). */
const MIGRATION_LOCK_CLASS = 0x636d696d;

/** Takes the lock migrations need on `own`'s database; resolves to a function that lets it go. */
async function holdLock(own: FreshDatabase): Promise<() => Promise<void>> {
  if (!onPostgres) {
    const db = new SQLite(dialectFor(own.url).target);
    // In WAL mode, as cmi leaves its database: cmi opens it and reads while the lock is held.
    db.pragma('journal_mode = WAL');
    db.exec('begin exclusive');
    return () => {
      db.exec('rollback');
      db.close();
      return Promise.resolve();
    };
  }
  const client = new pg.Client({ connectionString: own.url });
  await client.connect();
  await client.query(`select pg_advisory_lock(${MIGRATION_LOCK_CLASS}, hashtext(current_schema()))`);
  return async () => {
    await client.query(`select pg_advisory_unlock(${MIGRATION_LOCK_CLASS}, hashtext(current_schema()))`);
    await client.end();
  };
}
