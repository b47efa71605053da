import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * The permissions triage adds to the catalogue (roles/permissions.ts), frozen here as migration 016
 * froze its own; the system role `admin` (id 1) is given them, as it holds every permission.
 */
const PERMISSIONS: ReadonlyArray<readonly [number, string, string]> = [
  [32, 'infrastructure_errors.triage', 'Triage infrastructure errors: status, snooze and assignee, one or in bulk'],
  [33, 'infrastructure_errors.notes', 'Write notes on infrastructure errors, and delete the own ones'],
  [34, 'infrastructure_errors.notes.delete', 'Delete anyone\'s notes on infrastructure errors'],
];

/** The activity row a user's deletion leaves on each error it was assigned (details as JSON text, the same on both databases). */
const unassignedDetails = (userId: string) => `'{"from":' || ${userId} || ',"to":null,"reason":"user_deleted"}'`;

/**
 * Error triage (docs/api.md#error-triage):
 * - `infrastructure_errors` gains the triage state beside the spec's nine fields (never rendered in
 *   the record): `triage_status` (`unresolved` for every error, old and new), `assignee_id`, the snooze
 *   (`snoozed_until`, `snooze_occurrences` and the counter it wakes at, `snooze_until_counter`),
 *   `resolved_at`, `resolved_by_id`, `regressed_at` and `triage_updated_at` (null: never triaged, shown
 *   as the error's created_at). Columns, not a table: the list filters `status=` and `assignee=` are
 *   then a range of an index in the list's own order (`(triage_status, updated_at, id)`,
 *   `(assignee_id, updated_at, id)`), and the batch that counts a report reopens a resolved error
 *   with a conditional update of the row it already holds.
 * - `error_notes` and `error_activity`, by error (the activity oldest first, by id).
 * - A user marked deleted, or removed, is unassigned from every error (a trigger: any path, any
 *   process), the mark leaving an `assign` activity row.
 * - The new tables notify the tracker's changes like the others (migration 011).
 */
export function errorTriageMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const big = dialect.choose<'integer' | 'bigint'>({ sqlite: 'integer', postgres: 'bigint' });
      await db.schema.alterTable('infrastructure_errors').addColumn('triage_status', 'varchar(16)', (c) => c.notNull().defaultTo('unresolved')).execute();
      await db.schema.alterTable('infrastructure_errors').addColumn('assignee_id', 'integer').execute();
      await db.schema.alterTable('infrastructure_errors').addColumn('snoozed_until', 'varchar(32)').execute();
      await db.schema.alterTable('infrastructure_errors').addColumn('snooze_occurrences', big).execute();
      await db.schema.alterTable('infrastructure_errors').addColumn('snooze_until_counter', big).execute();
      await db.schema.alterTable('infrastructure_errors').addColumn('resolved_at', 'varchar(32)').execute();
      await db.schema.alterTable('infrastructure_errors').addColumn('resolved_by_id', 'integer').execute();
      await db.schema.alterTable('infrastructure_errors').addColumn('regressed_at', 'varchar(32)').execute();
      await db.schema.alterTable('infrastructure_errors').addColumn('triage_updated_at', 'varchar(32)').execute();
      await db.schema.createIndex('infrastructure_errors_status_updated_at').on('infrastructure_errors').columns(['triage_status', 'updated_at', 'id']).execute();
      await db.schema.createIndex('infrastructure_errors_assignee_updated_at').on('infrastructure_errors').columns(['assignee_id', 'updated_at', 'id']).execute();

      await dialect.tables.addIdColumn(db.schema.createTable('error_notes'))
        .addColumn('error_id', 'integer', (c) => c.notNull())
        .addColumn('author_id', 'integer')
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('error_notes_error').on('error_notes').columns(['error_id', 'id']).execute();
      await dialect.tables.addIdColumn(db.schema.createTable('error_activity'))
        .addColumn('error_id', 'integer', (c) => c.notNull())
        .addColumn('at', 'varchar(32)', (c) => c.notNull())
        .addColumn('actor_id', 'integer')
        .addColumn('action', 'varchar(32)', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('error_activity_error').on('error_activity').columns(['error_id', 'id']).execute();

      await dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
        async sqlite(lite) {
          await sql.raw(`create trigger users_deleted_unassign after update of status on users
            when new.status = 'deleted' and old.status <> 'deleted' begin
              insert into error_activity (error_id, at, actor_id, action, details)
                select id, new.updated_at, null, 'assign', ${unassignedDetails('new.id')} from infrastructure_errors where assignee_id = new.id order by id;
              update infrastructure_errors set assignee_id = null, triage_updated_at = new.updated_at where assignee_id = new.id;
            end`).execute(lite);
          await sql.raw(`create trigger users_removed_unassign after delete on users begin
              update infrastructure_errors set assignee_id = null where assignee_id = old.id;
            end`).execute(lite);
        },
        async postgres(pg) {
          await sql.raw(`create or replace function cmi_users_unassign() returns trigger language plpgsql as $$
            begin
              if TG_OP = 'UPDATE' then
                insert into error_activity (error_id, at, actor_id, action, details)
                  select id, new.updated_at, null, 'assign', ${unassignedDetails('new.id')} from infrastructure_errors where assignee_id = new.id order by id;
                update infrastructure_errors set assignee_id = null, triage_updated_at = new.updated_at where assignee_id = new.id;
              else
                update infrastructure_errors set assignee_id = null where assignee_id = old.id;
              end if;
              return null;
            end $$`).execute(pg);
          await sql.raw(`create trigger users_deleted_unassign after update of status on users for each row
            when (new.status = 'deleted' and old.status <> 'deleted') execute function cmi_users_unassign()`).execute(pg);
          await sql.raw('create trigger users_removed_unassign after delete on users for each row execute function cmi_users_unassign()').execute(pg);
        },
      })(db);
      await dialect.changeNotifications.create(db, ['error_notes', 'error_activity'], 'tracker');

      const at = new Date().toISOString();
      const anyDb = db as Kysely<Record<string, Record<string, unknown>>>;
      await anyDb.insertInto('permissions').values(PERMISSIONS.map(([id, identifier, label]) => ({ id, identifier, label, created_at: at, updated_at: at }))).execute();
      await anyDb.insertInto('role_permissions').values(PERMISSIONS.map(([id]) => ({ role_id: 1, permission_id: id }))).execute();
    },
  };
}
