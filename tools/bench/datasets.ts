/**
 * The data the benchmarks run on, made by them in a temp directory (SQLite) or a schema of their own
 * (PostgreSQL): users added through usersRepository.createMany, infrastructure errors through
 * recordBatch, both in batches of 1,000. docs/benchmarks.md describes them.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { systemClock } from '../../src/shared/clock.js';
import { hashPassword } from '../../src/users/passwords.js';
import { loadConfig } from '../../src/config.js';
import { migrateToLatest, openDatabase } from '../../src/db/database.js';
import type { ErrorReport } from '../../src/tracker/infrastructure-error.js';
import { trackerRepository } from '../../src/tracker/tracker.store.js';
import { type NewUser, usersRepository } from '../../src/users/users.store.js';
import { ADMIN_ROLE_ID, USER_ROLE_ID } from '../../src/roles/permissions.js';
import { postgresSchema } from '../shared/postgres-schema.js';

export type DatabaseKind = 'sqlite' | 'postgres';
export const DATABASE_NAMES: Record<DatabaseKind, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** Every seeded user's password; user 0 is `admin`, an administrator, the others `user<i>`. */
export const PASSWORD = 'bench-password';
export const BASIC = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const BATCH = 1_000;

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** An empty database: a SQLite file in a temp dir, or a new schema in the PostgreSQL database `postgres` names. */
export async function freshDatabase(kind: DatabaseKind, postgres?: string): Promise<BenchDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'cmi-bench-'));
    return { url: `sqlite:${join(dir, 'cmi.sqlite3')}`, drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })) };
  }
  if (!postgres) throw new Error('a PostgreSQL benchmark needs --postgres URL');
  return postgresSchema(postgres, 'cmi_bench');
}

/** Runs `fn` on a migrated database handle, closed after. */
export async function withDatabase<T>(url: string, fn: (database: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
  // Seeding runs statements longer than a request's (a third of 100,000 errors marked reported at once).
  const database = openDatabase(loadConfig({ DATABASE_URL: url, CMI_DB_STATEMENT_TIMEOUT: '600000' }));
  try {
    await migrateToLatest(database);
    return await fn(database);
  } finally {
    await database.close();
  }
}

/** Adds users `from` .. `to - 1` (user 0 is the administrator the requests sign in as). */
export async function growUsers(url: string, from: number, to: number): Promise<void> {
  await withDatabase(url, async (database) => {
    const users = usersRepository(database);
    const hash = await hashPassword(PASSWORD);
    const row = (i: number): NewUser => ({
      login: i === 0 ? 'admin' : `user${i}`,
      email: i === 0 ? 'admin@bench.test' : `user${i}@bench.test`,
      password_hash: hash,
      first_name: 'Bench',
      last_name: 'User',
      role_ids: [i === 0 ? ADMIN_ROLE_ID : USER_ROLE_ID],
      time_zone: null,
      locale: null,
    });
    for (let start = from; start < to; start += BATCH) {
      await users.createMany(Array.from({ length: Math.min(BATCH, to - start) }, (_, k) => row(start + k)), systemClock());
    }
    // What autovacuum does soon after a bulk load (each batch left dead versions of the block rows it
    // counted into); done here so the measurement does not race it or read through them.
    await database.dialect.statistics.refresh(database.db);
  });
}

/** A migrated database with `admin` / PASSWORD and `count - 1` more users. */
export const seedUsers = (url: string, count: number) => growUsers(url, 0, count);

export const ERROR_CLASSES = Array.from({ length: 20 }, (_, k) => `Bench${['Timeout', 'Refused', 'Storage', 'Network', 'Quota'][k % 5]}Error${k}`);
export const ERROR_HOSTS = Array.from({ length: 50 }, (_, k) => `hv-${String(k).padStart(2, '0')}`);
export const ERROR_COMPONENTS = ['hypervisor', 'storage', 'network', 'backup', 'scheduler'];
const WORDS = ['timeout', 'refused', 'deadlock', 'overflow', 'corrupt', 'unreachable', 'denied', 'exhausted', 'stale', 'mismatch'];

/** `count` distinct errors over the 30 days before `now`; a third reported; 20 classes, 50 hosts, 5 components, 10 words. */
export async function seedErrors(url: string, count: number, now: Date): Promise<void> {
  let state = 12345;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T;
  await withDatabase(url, async (database) => {
    const repository = trackerRepository(database);
    for (let start = 0; start < count; start += BATCH) {
      const reports: ErrorReport[] = Array.from({ length: Math.min(BATCH, count - start) }, (_, k) => {
        const i = start + k;
        return {
          fingerprint: randomBytes(32).toString('hex'),
          error_class: pick(ERROR_CLASSES),
          message: `${pick(WORDS)} while talking to node ${i % 997}`,
          backtrace: `app/bench/error${i}.js:1:in run`,
          occurred_at: new Date(now.getTime() - random() * 30 * 86_400_000),
          count: 1,
          host: pick(ERROR_HOSTS),
          component: pick(ERROR_COMPONENTS),
          request_id: null,
          context: null,
        };
      });
      await repository.recordBatch(reports, { first: 10, latest: 100 });
    }
    // Statistics first: PostgreSQL keeps a trigger statement's plan for the connection until the
    // tables' statistics change, and the plans made on the first batches, on tables then nearly
    // empty, scan error_breakdown whole for each error a statement moves (a third of 100,000 errors
    // marked reported ran past 10 minutes). Seeding outruns autovacuum's ANALYZE
    // (docs/benchmarks.md#bulk-changes-by-filter).
    await database.dialect.statistics.refresh(database.db);
    await database.db.updateTable('infrastructure_errors').set({ reported: 1 }).where(sql<boolean>`id % 3 = 0`).execute();
    await database.dialect.statistics.refresh(database.db);
  });
}

export interface SharedDatabase {
  url: string;
  users: number;
  errors: number;
  /** When the errors were seeded (the list's `since` filters count back from it), and how long it took. */
  errorsSeededAt?: Date;
  errorsSeedSeconds?: number;
}

/**
 * One database per kind that the suite's sections share, grown as they ask: at least `users` users,
 * only ever added (so the size curve grows it from 1,000 to 1,000,000 and the throughput figures then
 * run on it), and `errors` errors seeded once. `exact`: exactly `users`, a new database if it has more.
 */
export function sharedDatabases(postgres: string | undefined) {
  const held = new Map<DatabaseKind, SharedDatabase & { database: BenchDatabase }>();
  return {
    async get(kind: DatabaseKind, want: { users: number; errors?: number; exact?: boolean }): Promise<SharedDatabase> {
      let current = held.get(kind);
      if (current && want.exact && current.users > want.users) {
        await current.database.drop();
        current = undefined;
      }
      if (!current) {
        const database = await freshDatabase(kind, postgres);
        current = { database, url: database.url, users: 0, errors: 0 };
        held.set(kind, current);
      }
      if (current.users < want.users) {
        const started = performance.now();
        await growUsers(current.url, current.users, want.users);
        console.log(`${DATABASE_NAMES[kind]}: users ${current.users.toLocaleString('en')} -> ${want.users.toLocaleString('en')} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        current.users = want.users;
      }
      if ((want.errors ?? 0) > 0 && current.errors === 0) {
        const started = performance.now();
        current.errorsSeededAt = new Date();
        await seedErrors(current.url, want.errors as number, current.errorsSeededAt);
        current.errors = want.errors as number;
        current.errorsSeedSeconds = (performance.now() - started) / 1000;
        console.log(`${DATABASE_NAMES[kind]}: ${current.errors.toLocaleString('en')} errors seeded in ${current.errorsSeedSeconds.toFixed(1)} s`);
      } else if ((want.errors ?? 0) > current.errors) {
        throw new Error(`${kind}: ${want.errors} errors asked of a database seeded with ${current.errors}`);
      }
      return current;
    },
    async dropAll(): Promise<void> {
      for (const { database } of held.values()) await database.drop();
      held.clear();
    },
  };
}
export type SharedDatabases = ReturnType<typeof sharedDatabases>;
