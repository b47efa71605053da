import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * PostgreSQL: every statement that changes users or infrastructure errors notifies the channel
 * `cmi_data_changed` (payload: the schema), so every process can drop cached reads at once. SQLite
 * needs nothing: its processes read PRAGMA data_version (store/database.ts).
 */
export function changeNotificationsMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`
        create or replace function cmi_data_changed() returns trigger language plpgsql as $$
        begin
          perform pg_notify('cmi_data_changed', current_schema());
          return null;
        end $$`.execute(db);
      for (const table of ['users', 'infrastructure_errors']) {
        await sql`
          create trigger ${sql.raw(`${table}_changed`)}
          after insert or update or delete or truncate on ${sql.table(table)}
          for each statement execute function cmi_data_changed()`.execute(db);
      }
    },
  };
}
