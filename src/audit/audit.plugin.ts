import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import { auditTrailOn } from './audit-trail.js';
import { auditRoutes } from './audit.routes.js';

/** What the audit trail is made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface AuditPieces {
  database: Database;
  clock: Clock;
  /** Entries older than this many days go at each retention run (CMI_AUDIT_RETENTION_DAYS). */
  retentionDays: number;
  lists: ListSettings;
}

/**
 * The audit trail (docs/security.md#the-audit-trail): made first, since every feature's service
 * records its changes there; gives the trail; registers `/sysadmin_tools/audit_log`.
 */
export function auditPlugin({ database, clock, retentionDays, lists }: AuditPieces) {
  const trail = auditTrailOn(database, clock, retentionDays);
  return {
    trail,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(auditRoutes, { audit: trail, lists });
    },
  };
}
