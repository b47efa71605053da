import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * The catalogue as it stood when this migration was written (roles/permissions.ts keeps it; a later
 * permission comes with a migration of its own). Frozen here: a migration never changes.
 */
const PERMISSIONS: ReadonlyArray<readonly [number, string, string]> = [
  [1, 'users.read', 'See any user'],
  [2, 'users.read.own', 'See the own user'],
  [3, 'users.create', 'Create users'],
  [4, 'users.update', 'Edit any user, and the roles of users'],
  [5, 'users.update.own', 'Edit the own user'],
  [6, 'users.delete', 'Delete users'],
  [7, 'users.suspend', 'Suspend and activate users'],
  [8, 'users.api_key', 'Make a new API key for any user'],
  [9, 'users.api_key.own', 'Make a new API key for the own user'],
  [10, 'roles.read', 'See roles and permissions'],
  [11, 'roles.create', 'Create roles'],
  [12, 'roles.update', 'Edit roles'],
  [13, 'roles.delete', 'Delete roles'],
  [14, 'user_groups.read', 'See user groups'],
  [15, 'user_groups.create', 'Create user groups'],
  [16, 'user_groups.update', 'Edit user groups'],
  [17, 'user_groups.delete', 'Delete user groups'],
  [18, 'buckets.read', 'See billing buckets'],
  [19, 'buckets.create', 'Create billing buckets'],
  [20, 'buckets.update', 'Edit billing buckets'],
  [21, 'buckets.delete', 'Delete billing buckets'],
  [22, 'infrastructure_errors.read', 'See infrastructure errors, their occurrences, histograms and breakdowns'],
  [23, 'infrastructure_errors.create', 'Record infrastructure errors (what components report)'],
  [24, 'infrastructure_errors.report', 'Report an infrastructure error to the report webhook'],
  [25, 'infrastructure_errors.delete', 'Delete infrastructure errors'],
  [26, 'webhook_deliveries.read', 'See webhook deliveries'],
  [27, 'webhook_deliveries.retry', 'Send a failed webhook delivery again'],
];
/** The permissions of the system role `user` (id 2): acting on its own account. */
const OWN = new Set(['users.read.own', 'users.update.own', 'users.api_key.own']);

/**
 * Role-based access control (docs/security.md#authorisation-by-permission):
 * - `permissions`: the catalogue, ids fixed.
 * - `roles`: the system roles `admin` (id 1, every permission) and `user` (id 2, the `.own` ones),
 *   and the roles operators add.
 * - `role_permissions`, `user_roles`: what each role holds and who holds each role. Every existing
 *   user is given the role its `users.role` named ('admin' role 1, anything else role 2).
 *
 * `users.role` stays, as the database keeps it: a trigger on `user_roles` makes it 'admin' while the
 * user holds role 1, 'user' otherwise. cmi only inserts 'user' with a new user, then adds its roles; it reads it (for the last-administrator
 * guard in users/users.store.ts) and so do processes of the previous version during an upgrade.
 * The new tables notify changes like `users` (migration 003), so cached users' pages and
 * credentials follow a change of roles.
 */
export function rolesMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const at = new Date().toISOString();
      await db.schema
        .createTable('permissions')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('identifier', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('label', 'varchar(255)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await dialect.tables.addIdColumn(db.schema.createTable('roles'))
        .addColumn('label', 'varchar(255)', (c) => c.notNull())
        .addColumn('identifier', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('system', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('role_permissions')
        .addColumn('role_id', 'integer', (c) => c.notNull().references('roles.id').onDelete('cascade'))
        .addColumn('permission_id', 'integer', (c) => c.notNull().references('permissions.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('role_permissions_pkey', ['role_id', 'permission_id'])
        .execute();
      await db.schema
        .createTable('user_roles')
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade').onUpdate('cascade'))
        .addColumn('role_id', 'integer', (c) => c.notNull().references('roles.id'))
        .addPrimaryKeyConstraint('user_roles_pkey', ['user_id', 'role_id'])
        .execute();
      await db.schema.createIndex('user_roles_role').on('user_roles').columns(['role_id', 'user_id']).execute();

      const anyDb = db as Kysely<Record<string, Record<string, unknown>>>;
      await anyDb.insertInto('permissions').values(PERMISSIONS.map(([id, identifier, label]) => ({ id, identifier, label, created_at: at, updated_at: at }))).execute();
      await anyDb.insertInto('roles').values([
        { id: 1, label: 'Administrator', identifier: 'admin', system: 1, created_at: at, updated_at: at },
        { id: 2, label: 'User', identifier: 'user', system: 1, created_at: at, updated_at: at },
      ]).execute();
      // Ids given explicitly: the next role an operator adds gets 3.
      await dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
        sqlite: async () => {},
        postgres: async (pg) => {
          await sql`alter table roles alter column id restart with 3`.execute(pg);
        },
      })(db);
      await anyDb.insertInto('role_permissions').values([
        ...PERMISSIONS.map(([id]) => ({ role_id: 1, permission_id: id })),
        ...PERMISSIONS.filter(([, identifier]) => OWN.has(identifier)).map(([id]) => ({ role_id: 2, permission_id: id })),
      ]).execute();
      await sql`insert into user_roles (user_id, role_id) select id, case when role = 'admin' then 1 else 2 end from users`.execute(db);

      await dialect.choose<(db: Kysely<unknown>) => Promise<void>>({
        sqlite: async (lite) => {
          await sql`create trigger user_roles_admin_insert after insert on user_roles when new.role_id = 1 begin
            update users set role = 'admin' where id = new.user_id and role <> 'admin'; end`.execute(lite);
          await sql`create trigger user_roles_admin_delete after delete on user_roles when old.role_id = 1 begin
            update users set role = 'user' where id = old.user_id and role <> 'user'; end`.execute(lite);
        },
        postgres: async (pg) => {
          await sql`
            create or replace function cmi_user_roles_admin() returns trigger language plpgsql as $$
            begin
              if TG_OP = 'INSERT' then
                update users set role = 'admin' where id = new.user_id and role <> 'admin';
              else
                update users set role = 'user' where id = old.user_id and role <> 'user';
              end if;
              return null;
            end $$`.execute(pg);
          await sql`create trigger user_roles_admin_insert after insert on user_roles for each row when (new.role_id = 1) execute function cmi_user_roles_admin()`.execute(pg);
          await sql`create trigger user_roles_admin_delete after delete on user_roles for each row when (old.role_id = 1) execute function cmi_user_roles_admin()`.execute(pg);
        },
      })(db);
      await dialect.changeNotifications.create(db, ['permissions', 'roles', 'role_permissions', 'user_roles'], 'users');
    },
  };
}
