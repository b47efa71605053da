import type { Kysely } from 'kysely';

/** Single-session logouts and failed-login counters: shared by every process through the database. */
export const sessionsAndLockoutMigration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('revoked_sessions')
      .addColumn('session_id', 'varchar(32)', (c) => c.primaryKey())
      .addColumn('expires_at', 'varchar(32)', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('revoked_sessions_expires_at').on('revoked_sessions').column('expires_at').execute();

    await db.schema
      .createTable('login_failures')
      .addColumn('key', 'varchar(300)', (c) => c.primaryKey())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('window_started_at', 'varchar(32)', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('login_failures_window_started_at').on('login_failures').column('window_started_at').execute();
  },
};
