import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** The permissions alert routing adds to the catalogue (roles/permissions.ts), frozen here as migration 016 froze its own. */
const PERMISSIONS: ReadonlyArray<readonly [number, string, string]> = [
  [36, 'alert_destinations.read', 'See alert destinations (never their secrets) and their deliveries'],
  [37, 'alert_destinations.manage', 'Create, edit, test and delete alert destinations'],
  [38, 'alert_rules.read', 'See alert rules'],
  [39, 'alert_rules.manage', 'Create, edit and delete alert rules'],
];

/**
 * Alert routing (docs/alert-routing.md):
 * - `alert_destinations`: where alerts go (a signed webhook, a Slack-compatible incoming webhook, or
 *   mail over SMTP), with its secrets (`secret`, `smtp_password`), which are written, never served.
 * - `alert_rules` and `alert_rule_destinations`: which events of which errors go to which destinations.
 * - `alert_rule_windows`: per rule and error, the spike window and its last spike alert (as
 *   `error_alerts` keeps them for the built-in rule of CMI_ALERT_WEBHOOK_URL).
 * - `webhook_deliveries` gains `destination_id` (null: the built-in destination, or a report),
 *   `last_error` (why the last try failed, in a few words) and `sent_as` (the id of the message
 *   that carried it: its own, or a digest's).
 */
export function alertRoutingMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const at = new Date().toISOString();
      await dialect.tables.addIdColumn(db.schema.createTable('alert_destinations'))
        .addColumn('label', 'varchar(255)', (c) => c.notNull())
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('url', 'varchar(2048)')
        .addColumn('secret', 'varchar(255)')
        .addColumn('smtp_host', 'varchar(255)')
        .addColumn('smtp_port', 'integer')
        .addColumn('smtp_security', 'varchar(16)')
        .addColumn('smtp_user', 'varchar(255)')
        .addColumn('smtp_password', 'varchar(255)')
        .addColumn('from_address', 'varchar(320)')
        .addColumn('to_addresses', 'varchar(4096)')
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await dialect.tables.addIdColumn(db.schema.createTable('alert_rules'))
        .addColumn('label', 'varchar(255)', (c) => c.notNull())
        .addColumn('events', 'varchar(64)', (c) => c.notNull())
        .addColumn('component', 'varchar(255)')
        .addColumn('host', 'varchar(255)')
        .addColumn('error_class', 'varchar(255)')
        .addColumn('error_class_prefix', 'varchar(255)')
        .addColumn('spike_threshold', 'integer')
        .addColumn('spike_window', 'integer')
        .addColumn('cooldown', 'integer')
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createTable('alert_rule_destinations')
        .addColumn('rule_id', 'integer', (c) => c.notNull().references('alert_rules.id').onDelete('cascade'))
        .addColumn('destination_id', 'integer', (c) => c.notNull().references('alert_destinations.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('alert_rule_destinations_pkey', ['rule_id', 'destination_id'])
        .execute();
      await db.schema.createIndex('alert_rule_destinations_destination').on('alert_rule_destinations').columns(['destination_id', 'rule_id']).execute();
      await db.schema.createTable('alert_rule_windows')
        .addColumn('rule_id', 'integer', (c) => c.notNull())
        .addColumn('error_id', 'integer', (c) => c.notNull())
        .addColumn('window_started_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('window_count', 'integer', (c) => c.notNull())
        .addColumn('spike_alerted_at', 'varchar(32)')
        .addPrimaryKeyConstraint('alert_rule_windows_pkey', ['rule_id', 'error_id'])
        .execute();
      await db.schema.alterTable('webhook_deliveries').addColumn('destination_id', 'integer').execute();
      await db.schema.alterTable('webhook_deliveries').addColumn('last_error', 'varchar(255)').execute();
      await db.schema.alterTable('webhook_deliveries').addColumn('sent_as', 'varchar(36)').execute();
      await db.schema.createIndex('webhook_deliveries_destination').on('webhook_deliveries').columns(['destination_id', 'state', 'id']).execute();

      const anyDb = db as Kysely<Record<string, Record<string, unknown>>>;
      await anyDb.insertInto('permissions').values(PERMISSIONS.map(([id, identifier, label]) => ({ id, identifier, label, created_at: at, updated_at: at }))).execute();
      await anyDb.insertInto('role_permissions').values(PERMISSIONS.map(([id]) => ({ role_id: 1, permission_id: id }))).execute();
    },
  };
}
