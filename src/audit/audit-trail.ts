import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { Forbidden } from '../shared/problems.js';
import { type AuditActor, type AuditEntry, type AuditEvent, safeChanges, SYSTEM_ACTOR } from './audit-event.js';
import { type AuditFilters, type AuditRepository, auditRepository, type NewAuditRow } from './audit.store.js';
import type { Database } from '../db/database.js';

/** The longest address an audit row keeps (its column, migration 024). */
const MAX_ADDRESS_CHARS = 64;

/** Who reads the trail: anyone holding `audit_log.read` (roles/permissions.ts; the role `admin` does). */
export interface AuditReader {
  permissions: ReadonlySet<string>;
}

/**
 * The audit trail (docs/security.md#the-audit-trail). Every feature's service records its changes
 * here (`record`) once they are made, with the actor the request built (users/request-gate.ts): the
 * API, the console and the local commands alike. Reading needs `audit_log.read`.
 */
export function auditTrail(repository: AuditRepository, clock: Clock, settings: { retentionDays: number }) {
  const rowOf = (actor: AuditActor, entry: AuditEntry, at: string): NewAuditRow => ({
    at,
    actor_id: actor.id,
    actor_login: actor.login ?? (actor.id === null ? 'system' : `#${actor.id}`),
    credential: actor.credential ?? (actor.id === null ? 'local' : 'password'),
    // Behind CMI_TRUST_PROXY the address is what the proxy forwarded: cut to its column, so no change goes unrecorded.
    address: actor.address === undefined ? null : actor.address.slice(0, MAX_ADDRESS_CHARS),
    request_id: actor.requestId ?? null,
    action: entry.action,
    target_type: entry.target_type,
    target_id: entry.target_id,
    changes: JSON.stringify(safeChanges(entry.changes)),
  });

  const trail = {
    /** Records one change by `actor`. */
    record: (actor: AuditActor, entry: AuditEntry): Promise<void> => repository.insert([rowOf(actor, entry, clock().toISOString())]),

    /** Records several changes by `actor` at once (one statement). */
    recordAll: (actor: AuditActor, entries: readonly AuditEntry[]): Promise<void> => {
      const at = clock().toISOString();
      return repository.insert(entries.map((entry) => rowOf(actor, entry, at)));
    },

    /** A page of the trail, newest first (docs/api.md#audit-log). */
    async list(reader: AuditReader, filters: AuditFilters, limit: number, offset: number): Promise<Page<AuditEvent>> {
      if (!reader.permissions.has('audit_log.read')) throw Forbidden.needs('audit_log.read');
      return repository.page(filters, limit, offset);
    },

    /**
     * The retention job's part (docs/operations.md#retention): events older than CMI_AUDIT_RETENTION_DAYS
     * go; a run that removed any is itself recorded, by `system`, with the count.
     */
    async prune(actor: AuditActor = SYSTEM_ACTOR): Promise<number> {
      const now = clock();
      const removed = await repository.prune(new Date(now.getTime() - settings.retentionDays * 86_400_000));
      if (removed > 0) await trail.record(actor, { action: 'retention', target_type: 'audit_events', target_id: null, changes: { removed, retention_days: settings.retentionDays } });
      return removed;
    },
  };
  return trail;
}

export type AuditTrail = ReturnType<typeof auditTrail>;

/** The trail on `database` (the app's, or a local command's). */
export const auditTrailOn = (database: Database, clock: Clock, retentionDays: number): AuditTrail => auditTrail(auditRepository(database), clock, { retentionDays });
/** What a feature's service needs of the trail: recording. */
export type AuditRecorder = Pick<AuditTrail, 'record' | 'recordAll'>;
