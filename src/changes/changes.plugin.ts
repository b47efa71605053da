import type { FastifyInstance } from 'fastify';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import type { TrackerService } from '../tracker/tracker.service.js';
import { changesRoutes } from './changes.routes.js';
import { changesService } from './changes.service.js';
import { changesRepository } from './changes.store.js';

/** What the changes are made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface ChangesPieces {
  database: Database;
  clock: Clock;
  audit: AuditRecorder;
  lists: ListSettings;
  /** The errors whose suspects it answers (the tracker's service: who may read an error is its to say). */
  tracker: Pick<TrackerService, 'find'>;
}

/** Changes to the cloud: gives their service; registers `/sysadmin_tools/infrastructure/changes` and the errors' suspect changes. */
export function changesPlugin({ database, clock, audit, lists, tracker }: ChangesPieces) {
  const changes = changesService(changesRepository(database), clock, audit, tracker);
  return {
    service: changes,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(changesRoutes, { changes, lists });
    },
  };
}
