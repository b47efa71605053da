import type { Kysely } from 'kysely';

/**
 * A role can require a second factor of its holders (docs/security.md#second-factor): `requires_two_factor`
 * (0 or 1, default 0). A holder, directly or through its user group, without a confirmed second factor
 * may sign in only to enrol (users/two-factor-requirement.ts). Roles already move the credentials
 * version on every change (migration 019), so a change of the flag reaches every process at once.
 */
export const roleRequiresTwoFactorMigration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('roles').addColumn('requires_two_factor', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
};
