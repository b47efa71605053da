import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** The permissions this migration adds to the catalogue (roles/permissions.ts), frozen here. */
const PERMISSIONS: ReadonlyArray<readonly [number, string, string]> = [
  [28, 'ingest_keys.read', 'See ingest keys (Sentry DSNs)'],
  [29, 'ingest_keys.create', 'Create ingest keys'],
  [30, 'ingest_keys.update', 'Edit ingest keys'],
  [31, 'ingest_keys.delete', 'Revoke ingest keys'],
];

/**
 * Ingest keys (docs/sentry.md): write-only keys that authenticate the Sentry ingestion endpoints
 * and nothing else. `ingest_keys` holds what decides authentication, so a change to it moves the
 * credentials version like a change to a user (migrations 015, 019): every process refuses a revoked
 * or disabled key at once. What each key's use writes (last use, events dropped) is kept in
 * `ingest_key_usage`, which signals nothing, so reporting never drops anyone's cached credentials.
 * `ingested_events` keeps the Sentry events counted in the last day by key and event id, written in
 * the tracker's batch transaction, so an SDK's retry is counted once in any number of processes.
 * The four permissions join the catalogue and the role `admin`, as migration 016 stored the first ones.
 */
export function ingestKeysMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const at = new Date().toISOString();
      await dialect.tables.addIdColumn(db.schema.createTable('ingest_keys'))
        .addColumn('label', 'varchar(255)', (c) => c.notNull())
        .addColumn('component', 'varchar(255)')
        .addColumn('public_key', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull())
        .addColumn('allowed_origins', 'varchar(4096)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('ingest_key_usage')
        .addColumn('key_id', 'integer', (c) => c.primaryKey().references('ingest_keys.id').onDelete('cascade'))
        .addColumn('last_used_at', 'varchar(32)')
        .addColumn('dropped', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('ingested_events')
        .addColumn('event_key', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('occurred_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ingested_events_occurred_at').on('ingested_events').column('occurred_at').execute();
      const anyDb = db as Kysely<Record<string, Record<string, unknown>>>;
      await anyDb.insertInto('permissions').values(PERMISSIONS.map(([id, identifier, label]) => ({ id, identifier, label, created_at: at, updated_at: at }))).execute();
      await anyDb.insertInto('role_permissions').values(PERMISSIONS.map(([id]) => ({ role_id: 1, permission_id: id }))).execute();
      await dialect.changeNotifications.addCredentialChanges(db, ['ingest_keys']);
    },
  };
}
