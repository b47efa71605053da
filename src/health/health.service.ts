import { DatabaseUnavailable } from '../db/dialects/connection/database-unavailable.js';
import { type Database, schemaState } from '../db/database.js';
import { settingsRepository } from '../db/settings.store.js';
import type { Clock } from '../shared/clock.js';
import { ServiceUnavailable } from '../shared/problems.js';

export type ReadinessStatus = 'ok' | 'migrations pending' | 'database unreachable' | 'database refuses writes' | 'database not answering';

/** Whether the process can serve, and the schema version its database has (the last migration applied), when it could be read. */
export interface Readiness {
  status: ReadinessStatus;
  schemaVersion?: string;
}

/** The longest a readiness check takes, whatever the database does (a load balancer's probe times out). */
const READINESS_LIMIT_MS = 1500;

/** How long an answer stands for later probes: anonymous probes cannot make the database work harder. */
const READINESS_REUSE_MS = 1000;

/**
 * Whether this process can serve: the database answers, has every migration this cmi needs, and
 * accepts a write (a full disk or a read-only server answers reads but not logins). Concurrent
 * probes share one check, and its answer stands for a second. docs/operations.md#health-probes-for-load-balancers.
 */
export function healthService(database: Database, clock: Clock, ensureSessionKey: () => Promise<void>) {
  const settings = settingsRepository(database);
  let underWay: Promise<Readiness> | undefined;
  let last: { readiness: Readiness; at: number } | undefined;

  async function check(): Promise<Readiness> {
    let schemaVersion: string | undefined;
    const status = await (async (): Promise<ReadinessStatus> => {
      try {
        const schema = await schemaState(database);
        schemaVersion = schema.version;
        if (schema.pending.length > 0) return 'migrations pending';
        await settings.put('readiness_checked_at', clock().toISOString());
        // Ready means able to log a client in, which needs the session key (a worker started while the
        // database was down has yet to read it).
        await ensureSessionKey();
        return 'ok';
      } catch (error) {
        if (!(error instanceof ServiceUnavailable || error instanceof DatabaseUnavailable)) return 'database unreachable';
        if (error.reason === 'the database did not answer in time' || error.reason === 'the database is locked by another process') return 'database not answering';
        return error.reason === 'the database cannot be reached' ? 'database unreachable' : 'database refuses writes';
      }
    })();
    return schemaVersion === undefined ? { status } : { status, schemaVersion };
  }

  return {
    readiness(): Promise<Readiness> {
      if (last !== undefined && clock().getTime() - last.at < READINESS_REUSE_MS) return Promise.resolve(last.readiness);
      underWay ??= check()
        .then((readiness) => {
          last = { readiness, at: clock().getTime() };
          return readiness;
        })
        .finally(() => (underWay = undefined));
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<Readiness>((resolve) => (timer = setTimeout(() => resolve({ status: 'database not answering' }), READINESS_LIMIT_MS)));
      return Promise.race([underWay, limit]).finally(() => clearTimeout(timer));
    },
  };
}

export type HealthService = ReturnType<typeof healthService>;
