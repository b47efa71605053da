import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import { logSourcesRoutes } from './log-sources.routes.js';
import { logSourcesService } from './log-sources.service.js';
import { logSourcesRepository } from './log-sources.store.js';
import { SILENCE_CHECK_MS, type SourceSilenceWatch, startSourceSilenceWatch } from './source-silence.js';

/** What the log sources are made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface LogSourcesPieces {
  database: Database;
  clock: Clock;
  lists: ListSettings;
  /** The address links in silent and back alerts start with. */
  publicUrl: string;
  /** The outbox's wake: a check queued alerts. */
  wake: () => void;
  /** Where a failed silence check goes (the app's background faults). */
  onError: (error: unknown) => void;
}

/**
 * The log sources (docs/log-sources.md#sources-and-silence): gives `repository` (the readers add what
 * they saw through it), the service the console shows, `register(app)` for the list's route, and
 * `startSilenceWatch()`, the check of every 15 s whose `stop` the app's close awaits.
 */
export function logSourcesPlugin({ database, clock, lists, publicUrl, wake, onError }: LogSourcesPieces) {
  const repository = logSourcesRepository(database);
  const service = logSourcesService(repository);
  return {
    repository,
    service,
    startSilenceWatch: (intervalMs = SILENCE_CHECK_MS): SourceSilenceWatch => startSourceSilenceWatch({ database, clock, publicUrl, wake, onError, intervalMs }),
    async register(app: FastifyInstance): Promise<void> {
      await app.register(logSourcesRoutes, { sources: service, lists });
    },
  };
}
