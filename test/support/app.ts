import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Config, loadConfig } from '../../src/config.js';
import { hashPassword } from '../../src/users/passwords.js';
import type { Role, User } from '../../src/users/user.js';
import { buildApp } from '../../src/app/app.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { usersRepository } from '../../src/users/users.store.js';
import { type TestClock, testClock } from './clock.js';
import { migratedDatabase } from './database.js';
import { takeMismatches, validateResponses } from './response-validation.js';
import { ADMIN_ROLE_ID, USER_ROLE_ID } from '../../src/roles/permissions.js';
import { type RoleJson, roleJson } from './roles.js';
import type { StatementGate } from './statement-gate.js';

export const ADMIN = { login: 'admin', email: 'admin@example.com', password: 'admin-password' };
export const ALICE = { login: 'alice', email: 'alice@example.com', password: 'alice-password' };

export interface TestApp {
  app: FastifyInstance;
  /** Another process's view: a second app on its own connection to the same database. */
  secondProcess(): Promise<{ app: FastifyInstance; database: Database; close(): Promise<void> }>;
  database: Database;
  /** The system roles admin and user as a user record shows them (support/roles.ts). */
  systemRoles: { admin: RoleJson; user: RoleJson };
  time: TestClock;
  config: Config;
  admin: User;
  alice: User;
  /** `Basic ...` for a login and password. */
  basic(login: string, password: string): string;
  adminAuth: string;
  aliceAuth: string;
  /** Adds users that all share one password hash (hashing each would slow the suite). */
  addUsers(count: number, role?: Role): Promise<User[]>;
  close(): Promise<void>;
}

/** The password hashes of the users a test app starts with or adds, made once a process: argon2 is slow by design. */
const fixedHashes = new Map<string, Promise<string>>();
function fixedHash(password: string): Promise<string> {
  let hash = fixedHashes.get(password);
  if (!hash) fixedHashes.set(password, hash = hashPassword(password));
  return hash;
}

export interface TestAppOptions {
  /**
   * The app's statements go through this gate (support/statement-gate.ts, or anything that attaches a
   * Kysely plugin); the test's own do not.
   */
  gate?: Pick<StatementGate, 'attach'>;
  /** How often the app writes the faults it holds by itself (default: as served, each second). */
  faultFlushIntervalMs?: number;
  /** How often the app writes its ingest keys' use (default: as served, every 5 s). */
  ingestUsageFlushMs?: number;
}

/**
 * A fresh app on a freshly migrated database of its own (see support/database.ts), with an administrator and one ordinary user,
 * both created at the test clock's start time.
 */
export async function createTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const fresh = await migratedDatabase();
  const spool = mkdtempSync(join(tmpdir(), 'cmi-spool-'));
  // The tests' receivers listen on 127.0.0.1, an address alert destinations are refused at unless
  // allowed (docs/alert-routing.md#internal-addresses); a test of that refusal gives '' (none allowed).
  const config = loadConfig({ DATABASE_URL: fresh.url, LOG_LEVEL: 'silent', CMI_SPOOL_DIR: spool, CMI_ALERT_ALLOWED_HOSTS: '127.0.0.1', ...env });
  const database = openDatabase(config);
  const time = testClock();
  const repository = usersRepository(database);
  const create = async (fields: { login: string; email: string; password: string }, role: Role, hash?: string) =>
    repository.create(
      {
        login: fields.login,
        email: fields.email,
        password_hash: hash ?? (await fixedHash(fields.password)),
        first_name: fields.login === 'admin' ? 'Ada' : 'Alice',
        last_name: fields.login === 'admin' ? 'Admin' : 'User',
        role_ids: [role === 'admin' ? ADMIN_ROLE_ID : USER_ROLE_ID],
        time_zone: fields.login === 'admin' ? 'UTC' : null,
        locale: fields.login === 'admin' ? 'en' : null,
      },
      time.clock(),
    );
  const admin = await create(ADMIN, 'admin');
  const alice = await create(ALICE, 'user');
  const appDatabase = options.gate ? { ...database, db: options.gate.attach(database.db) } : database;
  // Every response is checked against the OpenAPI document (support/response-validation.ts).
  const extend = validateResponses();
  const app = await buildApp({ config, database: appDatabase, clock: time.clock, logger: false, faultFlushIntervalMs: options.faultFlushIntervalMs, ingestUsageFlushMs: options.ingestUsageFlushMs, extend });
  let added = 0;
  let closing: Promise<void> | undefined;
  const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
  const systemRoles = { admin: await roleJson(database, ADMIN_ROLE_ID), user: await roleJson(database, USER_ROLE_ID) };
  return {
    app,
    database,
    systemRoles,
    time,
    config,
    admin,
    alice,
    basic,
    adminAuth: basic(ADMIN.login, ADMIN.password),
    async secondProcess() {
      const other = openDatabase(config);
      const otherApp = await buildApp({ config, database: other, clock: time.clock, logger: false, extend });
      return {
        app: otherApp,
        database: other,
        async close() {
          await otherApp.close();
          await other.close();
        },
      };
    },
    aliceAuth: basic(ALICE.login, ALICE.password),
    async addUsers(count, role = 'user') {
      const hash = await fixedHash('shared-password');
      const users: User[] = [];
      for (let i = 0; i < count; i++) {
        added += 1;
        const login = `user${String(added).padStart(3, '0')}`;
        users.push(await create({ login, email: `${login}@example.com`, password: '' }, role, hash));
      }
      return users;
    },
    close() {
      // Once only: an afterEach may close the app of a test before it whose own set-up then failed.
      closing ??= (async () => {
        await app.close();
        await database.close();
        await fresh.drop();
        const mismatch = takeMismatches();
        if (mismatch) throw mismatch;
      })();
      return closing;
    },
  };
}

/** Makes `app` listen on a free port of 127.0.0.1 (tests over a real socket); returns the port. */
export async function listenLocally(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as { port: number }).port;
}
