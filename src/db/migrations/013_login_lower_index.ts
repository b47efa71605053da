import { type Kysely, sql } from 'kysely';

/**
 * A login may not equal another account's login or email in any case (docs/security.md#one-name-one-account):
 * the check reads `lower(login)`, through this index. Not unique, so a database that already holds
 * two such accounts still migrates; `cmi serve` reports them at start-up (users/name-collisions.ts).
 */
export const loginLowerIndexMigration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex('users_login_lower').on('users').expression(sql`lower(login)`).execute();
  },
};
