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
 * - `error_triage`: one row per error (`error_id`), kept by triggers on `infrastructure_errors` (a
 *   new error gets its row, `unresolved`, in the statement that inserts it; a deleted one loses it),
 *   so every error has exactly one, whichever process or version writes (a row already there, as a
 *   restore inserts them before the errors, is kept): `triage_status`,
 *   `assignee_id`, the snooze (`snoozed_until`, `snooze_occurrences` and the counter it wakes at,
 *   `snooze_until_counter`), `resolved_at`, `resolved_by_id`, `regressed_at`, `updated_at`.
 *   A narrow table of its own, not columns of the errors: a bulk change of 100 000 errors rewrites
 *   100 000 narrow rows and two indexes, not the wide records and their eight, and the record keeps
 *   its nine fields. The filters `status=` and `assignee=` read `(triage_status, error_id)` and
 *   `(assignee_id, error_id)`, and their counts are counts of those index ranges.
 * - `error_notes` and `error_activity`, by error (the activity oldest first, by id).
 * - A user marked deleted, or removed, is unassigned from every error (a trigger: any path, any
 *   process), the mark leaving an `assign` activity row.
 * - The new tables notify the tracker's changes like the others (migration 011).
 */
export function errorTriageMigration(dialect: Dialect) {
  const big = dialect.choose<'integer' | 'bigint'>({ sqlite: 'integer', postgres: 'bigint' });
  const triageTriggers = dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
    async sqlite(lite) {
      await sql.raw(`create trigger infrastructure_errors_triage_insert after insert on infrastructure_errors begin
          insert into error_triage (error_id, triage_status, updated_at) values (new.id, 'unresolved', new.created_at) on conflict (error_id) do nothing;
        end`).execute(lite);
      await sql.raw(`create trigger infrastructure_errors_triage_delete after delete on infrastructure_errors begin
          delete from error_triage where error_id = old.id;
        end`).execute(lite);
    },
    // Per statement, with the transition tables, as migration 007's counts.
    async postgres(pg) {
      const run = (statement: string) => sql.raw(statement).execute(pg);
      await run(`create or replace function error_triage_added() returns trigger language plpgsql as $$ begin
          insert into error_triage (error_id, triage_status, updated_at) select id, 'unresolved', created_at from added order by id on conflict (error_id) do nothing;
          return null; end $$`);
      await run(`create or replace function error_triage_removed() returns trigger language plpgsql as $$ begin
          delete from error_triage where error_id in (select id from removed);
          return null; end $$`);
      await run('create trigger infrastructure_errors_triage_insert after insert on infrastructure_errors referencing new table as added for each statement execute function error_triage_added()');
      await run('create trigger infrastructure_errors_triage_delete after delete on infrastructure_errors referencing old table as removed for each statement execute function error_triage_removed()');
    },
  });
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Atomic, as migration 007: an error written between the triggers and the backfill gets one row.
      await dialect.migrations.atomically(db, async (trx) => {
        await trx.schema.createTable('error_triage')
          .addColumn('error_id', 'integer', (c) => c.primaryKey())
          .addColumn('triage_status', 'varchar(16)', (c) => c.notNull())
          .addColumn('assignee_id', 'integer')
          .addColumn('snoozed_until', 'varchar(32)')
          .addColumn('snooze_occurrences', big)
          .addColumn('snooze_until_counter', big)
          .addColumn('resolved_at', 'varchar(32)')
          .addColumn('resolved_by_id', 'integer')
          .addColumn('regressed_at', 'varchar(32)')
          .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
          .execute();
        await triageTriggers(trx);
        await sql`insert into error_triage (error_id, triage_status, updated_at) select id, 'unresolved', created_at from infrastructure_errors`.execute(trx);
        await trx.schema.createIndex('error_triage_status').on('error_triage').columns(['triage_status', 'error_id']).execute();
        await trx.schema.createIndex('error_triage_assignee').on('error_triage').columns(['assignee_id', 'error_id']).execute();
      });

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
                select error_id, new.updated_at, null, 'assign', ${unassignedDetails('new.id')} from error_triage where assignee_id = new.id order by error_id;
              update error_triage set assignee_id = null, updated_at = new.updated_at where assignee_id = new.id;
            end`).execute(lite);
          await sql.raw(`create trigger users_removed_unassign after delete on users begin
              update error_triage set assignee_id = null where assignee_id = old.id;
            end`).execute(lite);
        },
        async postgres(pg) {
          await sql.raw(`create or replace function cmi_users_unassign() returns trigger language plpgsql as $$
            begin
              if TG_OP = 'UPDATE' then
                insert into error_activity (error_id, at, actor_id, action, details)
                  select error_id, new.updated_at, null, 'assign', ${unassignedDetails('new.id')} from error_triage where assignee_id = new.id order by error_id;
                update error_triage set assignee_id = null, updated_at = new.updated_at where assignee_id = new.id;
              else
                update error_triage set assignee_id = null where assignee_id = old.id;
              end if;
              return null;
            end $$`).execute(pg);
          await sql.raw(`create trigger users_deleted_unassign after update of status on users for each row
            when (new.status = 'deleted' and old.status <> 'deleted') execute function cmi_users_unassign()`).execute(pg);
          await sql.raw('create trigger users_removed_unassign after delete on users for each row execute function cmi_users_unassign()').execute(pg);
        },
      })(db);
      await dialect.changeNotifications.create(db, ['error_triage', 'error_notes', 'error_activity'], 'tracker');

      const at = new Date().toISOString();
      const anyDb = db as Kysely<Record<string, Record<string, unknown>>>;
      await anyDb.insertInto('permissions').values(PERMISSIONS.map(([id, identifier, label]) => ({ id, identifier, label, created_at: at, updated_at: at }))).execute();
      await anyDb.insertInto('role_permissions').values(PERMISSIONS.map(([id]) => ({ role_id: 1, permission_id: id }))).execute();
    },
  };
}
