import type { FastifyInstance } from 'fastify';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import { bucketsRoutes } from './buckets.routes.js';
import { bucketsService } from './buckets.service.js';
import { bucketsRepository } from './buckets.store.js';

/** What the billing buckets are made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface BucketsPieces {
  database: Database;
  clock: Clock;
  audit: AuditRecorder;
  lists: ListSettings;
}

/** The billing buckets: gives their service; registers `/billing/buckets`. */
export function bucketsPlugin({ database, clock, audit, lists }: BucketsPieces) {
  const buckets = bucketsService(bucketsRepository(database), clock, audit);
  return {
    service: buckets,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(bucketsRoutes, { buckets, lists });
    },
  };
}
