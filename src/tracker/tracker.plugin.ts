import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import { type FaultCapture, faultCapture } from './fault-capture.js';
import { faultSpool } from './fault-spool.js';
import { releasesRoutes } from './releases.routes.js';
import { savedSearchesRoutes } from './saved-searches.routes.js';
import { savedSearchesService } from './saved-searches.service.js';
import { savedSearchesRepository } from './saved-searches.store.js';
import { releasesService } from './releases.service.js';
import { releasesRepository } from './releases.store.js';
import { every, type Leases, retentionJob } from './retention.js';
import { trackerChanges } from './tracker-changes.js';
import { trackerRoutes } from './tracker.routes.js';
import { trackerService, type TrackerAlerts, type TrackerSettings } from './tracker.service.js';
import { trackerRepository } from './tracker.store.js';
import { triageRoutes } from './triage.routes.js';
import { triageService } from './triage.service.js';
import { triageRepository } from './triage.store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** cmi's own faults, held until written (tests flush it to read them back at once). */
    faults: FaultCapture;
  }
}

/** How often the retention job runs in each process (one of them does the work: retention.ts). */
const RETENTION_INTERVAL_MS = 3_600_000;

/** What the tracker is made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface TrackerPieces {
  database: Database;
  clock: Clock;
  audit: AuditRecorder;
  /** The CMI_ERRORS_* settings, with where a dying process leaves the faults it could not write. */
  settings: TrackerSettings & { spoolDirectory: string };
  /** Where each batch queues its alerts, and what it wakes then (the alerts' planner and outbox). */
  alerts: TrackerAlerts;
  /** A user by id, as the users' store reads it (who may be assigned an error). */
  findUser: (id: number) => Promise<{ status: string; permissions: ReadonlySet<string> } | undefined>;
  /** cmi's own version, which each of its recorded faults carries. */
  version: string;
  /** How often held faults are written by themselves (AppOptions.faultFlushIntervalMs). */
  faultFlushIntervalMs: number;
  lists: ListSettings;
}

/**
 * The error tracker (docs/api.md#infrastructure-errors), its triage and cmi's own faults: gives the
 * tracker's service and store (reports and alerts record through them), the triage service and
 * the fault capture; registers the errors' and their triage's routes; runs the retention job and
 * records the faults a crashed process spooled, when the app says.
 */
export function trackerPlugin({ database, clock, audit, settings, alerts, findUser, version, faultFlushIntervalMs, lists }: TrackerPieces) {
  const errors = trackerRepository(database);
  // What this process's batches of reports changed, told to the tracker's page cache (tracker-changes.ts).
  const changes = trackerChanges();
  const tracker = trackerService(errors, clock, audit, settings, alerts, { withheld: database.withheld, tracker: changes });
  const savedSearches = savedSearchesService(savedSearchesRepository(database), clock, audit);
  const faults = faultCapture(tracker.recordReports, clock, { host: hostname(), version }, {
    flushIntervalMs: faultFlushIntervalMs,
    maxFingerprints: 1000,
  });
  // Error triage (docs/api.md#error-triage): an assignee is a user who is not deleted and may read errors.
  const triage = triageService(triageRepository(database), clock, audit, async (userId) => {
    const user = await findUser(userId);
    return user !== undefined && user.status !== 'deleted' && user.permissions.has('infrastructure_errors.read');
  });
  // The tracker's pages show who is assigned, which a user's deletion changes (migration 023): they
  // follow the users' data version too.
  // Asked on every read of the tracker: the joined string is made again only when a part moved.
  let joined: { tracked: string; people: string; version: string } | undefined;
  const trackerAndUsersVersion = () => {
    const tracked = database.dataVersions.tracker();
    const people = database.dataVersions.users();
    if (tracked === undefined || people === undefined) return undefined;
    if (tracked !== joined?.tracked || people !== joined.people) joined = { tracked, people, version: `${tracked}|${people}` };
    return joined.version;
  };
  return {
    service: tracker,
    store: errors,
    triage,
    savedSearches,
    faults,
    /** `/sysadmin_tools/infrastructure/errors`, their triage, and the releases they occurred in. */
    async register(app: FastifyInstance): Promise<void> {
      await app.register(trackerRoutes, { tracker, savedSearches, lists, dataVersion: trackerAndUsersVersion, beforeRead: triage.wakeIfDue, partialChanges: changes.changes });
      await app.register(triageRoutes, { triage, lists });
      await app.register(savedSearchesRoutes, { savedSearches, lists });
      await app.register(releasesRoutes, { releases: releasesService(releasesRepository(database), clock, audit), lists });
    },
    /**
     * Starts the retention job (docs/operations.md#retention): each hour, the first a minute from now,
     * snoozes that ended wake and old errors go, then what `alsoPrune` removes (the audit trail's old
     * entries), by the one process that claims the interval's lease. Gives what stops it.
     */
    startRetention(leases: Leases, alsoPrune: () => Promise<unknown>, onFault: (error: unknown) => void): { stop(): Promise<void> } {
      const retention = retentionJob(async () => {
        await triage.wakeSnoozed();
        const pruned = await tracker.prune();
        await alsoPrune();
        return pruned;
      }, leases, clock, RETENTION_INTERVAL_MS);
      return every(RETENTION_INTERVAL_MS, 60_000, () => retention.run(), onFault);
    },
    /** Records the faults a process that crashed left behind (docs/operations.md#faults-of-cmi). */
    recordSpooledFaults(onFault: (error: unknown) => void): void {
      const spool = faultSpool(settings.spoolDirectory);
      for (const { reports, done } of spool.take()) {
        void tracker.recordReports(reports).then(done).catch(onFault);
      }
    },
  };
}
