import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import type { Schema } from '../db/schema.js';
import { groupRoles, unknownRoleIds } from '../roles/roles.store.js';
import type { UserGroup, UserGroupFields } from './user-group.js';

/** Whether user group `id` exists (users check the group a user is put in). */
export async function userGroupExists(db: Kysely<Schema>, id: number): Promise<boolean> {
  return (await db.selectFrom('user_groups').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Thrown when a group's identifier is taken. */
export class DuplicateGroupIdentifier extends Error {}

/** What deleting a group came to. */
export type UserGroupRemoval = 'removed' | 'not_found' | 'in_use';

/** The only SQL of user_groups and user_group_roles (migration 020), besides what users read with a user. */
export function userGroupsRepository(database: Database) {
  const { db, dialect } = database;

  async function groupsByIds(trx: Kysely<Schema>, ids: number[] | undefined, limit?: number, offset?: number): Promise<UserGroup[]> {
    let query = trx.selectFrom('user_groups').selectAll().orderBy('id');
    if (ids !== undefined) query = query.where('id', 'in', ids.length > 0 ? ids : [-1]);
    if (limit !== undefined) query = query.limit(limit).offset(offset ?? 0);
    const rows = await query.execute();
    if (rows.length === 0) return [];
    const held = await groupRoles(trx, rows.map((row) => Number(row.id)));
    return rows.map((row) => ({
      id: Number(row.id), label: row.label, identifier: row.identifier, roles: held.get(Number(row.id))?.roles ?? [],
      bucket_id: row.bucket_id === null ? null : Number(row.bucket_id), created_at: new Date(row.created_at), updated_at: new Date(row.updated_at),
    }));
  }

  function asDuplicate(error: unknown): unknown {
    return dialect.constraints.uniqueViolationColumn(error) ? new DuplicateGroupIdentifier() : error;
  }

  async function setRoles(trx: Kysely<Schema>, id: number, roleIds: readonly number[]): Promise<void> {
    await trx.deleteFrom('user_group_roles').where('user_group_id', '=', id).execute();
    const ids = [...new Set(roleIds)];
    if (ids.length > 0) await trx.insertInto('user_group_roles').values(ids.map((role_id) => ({ user_group_id: id, role_id }))).execute();
  }

  return {
    async page(limit: number, offset: number): Promise<{ items: UserGroup[]; total: number }> {
      const { n } = await db.selectFrom('user_groups').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const total = Number(n);
      return { items: offset >= total ? [] : await groupsByIds(db, undefined, limit, offset), total };
    },

    async find(id: number): Promise<UserGroup | undefined> {
      return (await groupsByIds(db, [id]))[0];
    },

    exists: (id: number) => userGroupExists(db, id),

    async identifierTaken(identifier: string, exceptId?: number): Promise<boolean> {
      let query = db.selectFrom('user_groups').select('id').where('identifier', '=', identifier);
      if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
      return (await query.executeTakeFirst()) !== undefined;
    },

    /** Of `ids`, those no role has. */
    unknownRoleIds: (ids: readonly number[]) => unknownRoleIds(db, ids),

    async bucketExists(id: number): Promise<boolean> {
      return (await db.selectFrom('billing_buckets').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    },

    async create(fields: UserGroupFields, now: Date): Promise<UserGroup> {
      const at = now.toISOString();
      try {
        return await db.transaction().execute(async (trx) => {
          const { id } = await trx.insertInto('user_groups')
            .values({ label: fields.label, identifier: fields.identifier, bucket_id: fields.bucket_id, created_at: at, updated_at: at })
            .returning('id').executeTakeFirstOrThrow();
          await setRoles(trx, Number(id), fields.role_ids);
          return (await groupsByIds(trx, [Number(id)]))[0] as UserGroup;
        }).finally(() => database.transactionEnded('users'));
      } catch (error) {
        throw asDuplicate(error);
      }
    },

    /** Changes what `fields` holds; `role_ids` replace the group's. Undefined when there is no such group. */
    async update(id: number, fields: Partial<UserGroupFields>, now: Date): Promise<UserGroup | undefined> {
      const { role_ids: roleIds, ...columns } = fields;
      try {
        return await db.transaction().execute(async (trx) => {
          const row = await trx.updateTable('user_groups').set({ ...columns, updated_at: now.toISOString() }).where('id', '=', id).returning('id').executeTakeFirst();
          if (!row) return undefined;
          if (roleIds !== undefined) await setRoles(trx, id, roleIds);
          return (await groupsByIds(trx, [id]))[0];
        }).finally(() => database.transactionEnded('users'));
      } catch (error) {
        throw asDuplicate(error);
      }
    },

    /**
     * Deletes a group no user belongs to but users marked deleted (who leave it, as they leave a role or a
     * bucket: Terraform destroys a user, then its group), with its roles; otherwise says why not.
     */
    async remove(id: number): Promise<UserGroupRemoval> {
      try {
        return await db.transaction().execute(async (trx) => {
          if ((await trx.selectFrom('user_groups').select('id').where('id', '=', id).executeTakeFirst()) === undefined) return 'not_found';
          const held = await trx.selectFrom('users').select('id').where('user_group_id', '=', id).where('status', '<>', 'deleted').limit(1).executeTakeFirst();
          if (held !== undefined) return 'in_use';
          await trx.updateTable('users').set({ user_group_id: null }).where('user_group_id', '=', id).execute();
          await trx.deleteFrom('user_groups').where('id', '=', id).execute();
          return 'removed' as const;
        }).finally(() => database.transactionEnded('users'));
      } catch (error) {
        // A user put in the group by a transaction that committed meanwhile (PostgreSQL): the foreign key refuses.
        if (dialect.constraints.isForeignKeyViolation(error)) return 'in_use';
        throw error;
      }
    },
  };
}

export type UserGroupsRepository = ReturnType<typeof userGroupsRepository>;
