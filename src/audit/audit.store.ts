import type { Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import type { AuditEventsTable } from '../db/schema.js';
import type { Page } from '../shared/page.js';
import type { AuditEvent } from './audit-event.js';

/** A row as inserted: everything but the id. */
export type NewAuditRow = Omit<Selectable<AuditEventsTable>, 'id'>;

/** The audit list's filters (docs/api.md#audit-log). */
export interface AuditFilters {
  actor_id?: number;
  action?: string;
  target_type?: string;
  target_id?: number;
  since?: Date;
  until?: Date;
}

const toEvent = (row: Selectable<AuditEventsTable>): AuditEvent => ({
  id: Number(row.id),
  at: new Date(row.at),
  actor_id: row.actor_id === null ? null : Number(row.actor_id),
  actor_login: row.actor_login,
  credential: row.credential,
  address: row.address,
  request_id: row.request_id,
  action: row.action,
  target_type: row.target_type,
  target_id: row.target_id === null ? null : Number(row.target_id),
  changes: row.changes,
});

/** The only SQL of `audit_events` (migration 024). */
export function auditRepository(database: Database) {
  const { db } = database;
  const selected = (filters: AuditFilters) => {
    let query = db.selectFrom('audit_events');
    if (filters.actor_id !== undefined) query = query.where('actor_id', '=', filters.actor_id);
    if (filters.action !== undefined) query = query.where('action', '=', filters.action);
    if (filters.target_type !== undefined) query = query.where('target_type', '=', filters.target_type);
    if (filters.target_id !== undefined) query = query.where('target_id', '=', filters.target_id);
    // `at` is always written by toISOString, so its text orders as its time.
    if (filters.since !== undefined) query = query.where('at', '>=', filters.since.toISOString());
    if (filters.until !== undefined) query = query.where('at', '<=', filters.until.toISOString());
    return query;
  };
  return {
    async insert(rows: readonly NewAuditRow[]): Promise<void> {
      if (rows.length > 0) await db.insertInto('audit_events').values([...rows]).execute();
    },

    /** A page of the events the filters keep, newest first, and how many they keep. */
    async page(filters: AuditFilters, limit: number, offset: number): Promise<Page<AuditEvent>> {
      const { total } = await selected(filters).select((eb) => eb.fn.countAll<string | number>().as('total')).executeTakeFirstOrThrow();
      const count = Number(total);
      if (offset >= count) return { items: [], total: count };
      const rows = await selected(filters).selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute();
      return { items: rows.map(toEvent), total: count };
    },

    /** Removes the events older than `before`; answers how many. */
    async prune(before: Date): Promise<number> {
      const result = await db.deleteFrom('audit_events').where('at', '<', before.toISOString()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type AuditRepository = ReturnType<typeof auditRepository>;
