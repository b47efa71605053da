import type { FastifyInstance } from 'fastify';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import type { TrackerService } from '../tracker/tracker.service.js';
import { ingestKeysRoutes } from './ingest-keys.routes.js';
import { ingestKeysService } from './ingest-keys.service.js';
import { ingestKeysRepository } from './ingest-keys.store.js';
import { sentryIngestion } from './sentry-ingestion.js';
import { sentryRoutes } from './sentry.routes.js';

/** What ingestion is made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface IngestPieces {
  database: Database;
  clock: Clock;
  audit: AuditRecorder;
  /** The tracker's service: events are recorded through its group commit. */
  tracker: TrackerService;
  /** How often this process writes its keys' use (last use, events dropped), in ms. */
  usageFlushMs: number;
  /** CMI_PUBLIC_URL when set: the DSNs start with it. */
  publicUrl: string | undefined;
  lists: ListSettings;
}

/**
 * Ingest keys and the Sentry protocol (docs/sentry.md): gives the keys' service; registers the keys'
 * routes and, in a context of its own (any body, read with the Sentry limits, and Sentry's error
 * answers), the Sentry endpoints; `stop` writes the keys' use still held (the app's close).
 */
export function ingestPlugin({ database, clock, audit, tracker, usageFlushMs, publicUrl, lists }: IngestPieces) {
  const keys = ingestKeysService(ingestKeysRepository(database), clock, audit, {
    version: database.dataVersions.credentials,
    heard: database.dataVersions.credentialsHeard,
  });
  const ingestion = sentryIngestion(keys, tracker, clock, { usageFlushMs });
  return {
    keys,
    stop: () => ingestion.stop(),
    async register(app: FastifyInstance): Promise<void> {
      await app.register(ingestKeysRoutes, { keys, lists, publicUrl });
      await app.register(sentryRoutes, { ingestion });
    },
  };
}
