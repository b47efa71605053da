import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** The permission this migration adds to the catalogue (roles/permissions.ts), frozen here. */
const PERMISSIONS: ReadonlyArray<readonly [number, string, string]> = [
  [35, 'audit_log.read', 'Read the audit log'],
];

/**
 * The audit trail (docs/api.md#audit-log, docs/security.md#the-audit-trail): one row of
 * `audit_events` for every change made through any interface, newest read first (by id). Who acted
 * (`actor_id`, null for the operator and cmi itself, and `actor_login`, kept as it was then), how it
 * proved it (`credential`), from where (`address`, `request_id`), what it did (`action`, `target_type`,
 * `target_id`) and what changed (`changes`, a JSON object as text, the same on both databases, never a
 * secret). The filters read `(actor_id, id)`, `(action, id)`, `(target_type, target_id, id)`, and
 * retention `(at)`. The permission to read it joins the catalogue and the role `admin`.
 */
export function auditLogMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('audit_events'))
        .addColumn('at', 'varchar(32)', (c) => c.notNull())
        .addColumn('actor_id', 'integer')
        .addColumn('actor_login', 'varchar(255)', (c) => c.notNull())
        .addColumn('credential', 'varchar(16)', (c) => c.notNull())
        .addColumn('address', 'varchar(64)')
        .addColumn('request_id', 'varchar(255)')
        .addColumn('action', 'varchar(64)', (c) => c.notNull())
        .addColumn('target_type', 'varchar(32)', (c) => c.notNull())
        .addColumn('target_id', 'integer')
        .addColumn('changes', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_events_at').on('audit_events').columns(['at']).execute();
      await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['actor_id', 'id']).execute();
      await db.schema.createIndex('audit_events_action').on('audit_events').columns(['action', 'id']).execute();
      await db.schema.createIndex('audit_events_target').on('audit_events').columns(['target_type', 'target_id', 'id']).execute();

      const at = new Date().toISOString();
      const anyDb = db as Kysely<Record<string, Record<string, unknown>>>;
      await anyDb.insertInto('permissions').values(PERMISSIONS.map(([id, identifier, label]) => ({ id, identifier, label, created_at: at, updated_at: at }))).execute();
      await anyDb.insertInto('role_permissions').values(PERMISSIONS.map(([id]) => ({ role_id: 1, permission_id: id }))).execute();
    },
  };
}
