import type { Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import type { BillingBucketsTable } from '../db/schema.js';
import type { Bucket, BucketFields } from './bucket.js';

const flag = (value: boolean) => (value ? 1 : 0);

function toBucket(row: Selectable<BillingBucketsTable>): Bucket {
  return {
    id: Number(row.id), label: row.label, currency_code: row.currency_code, monthly_price: Number(row.monthly_price),
    show_price: Number(row.show_price) === 1, allows_kms: Number(row.allows_kms) === 1, allows_mak: Number(row.allows_mak) === 1, allows_own: Number(row.allows_own) === 1,
    created_at: new Date(row.created_at), updated_at: new Date(row.updated_at),
  };
}

const toColumns = (fields: Partial<BucketFields>) => ({
  ...(fields.label !== undefined ? { label: fields.label } : {}),
  ...(fields.currency_code !== undefined ? { currency_code: fields.currency_code } : {}),
  ...(fields.monthly_price !== undefined ? { monthly_price: fields.monthly_price } : {}),
  ...(fields.show_price !== undefined ? { show_price: flag(fields.show_price) } : {}),
  ...(fields.allows_kms !== undefined ? { allows_kms: flag(fields.allows_kms) } : {}),
  ...(fields.allows_mak !== undefined ? { allows_mak: flag(fields.allows_mak) } : {}),
  ...(fields.allows_own !== undefined ? { allows_own: flag(fields.allows_own) } : {}),
});

/** The only SQL of billing_buckets (migration 017). */
export function bucketsRepository(database: Database) {
  const { db } = database;
  return {
    async page(limit: number, offset: number): Promise<{ items: Bucket[]; total: number }> {
      const { n } = await db.selectFrom('billing_buckets').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await db.selectFrom('billing_buckets').selectAll().orderBy('id').limit(limit).offset(offset).execute();
      return { items: rows.map(toBucket), total: Number(n) };
    },

    async find(id: number): Promise<Bucket | undefined> {
      const row = await db.selectFrom('billing_buckets').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toBucket(row);
    },

    async create(fields: BucketFields, now: Date): Promise<Bucket> {
      const at = now.toISOString();
      const row = await db.insertInto('billing_buckets')
        .values({
          label: fields.label, currency_code: fields.currency_code, monthly_price: fields.monthly_price, show_price: flag(fields.show_price),
          allows_kms: flag(fields.allows_kms), allows_mak: flag(fields.allows_mak), allows_own: flag(fields.allows_own), created_at: at, updated_at: at,
        })
        .returningAll().executeTakeFirstOrThrow();
      return toBucket(row);
    },

    async update(id: number, fields: Partial<BucketFields>, now: Date): Promise<Bucket | undefined> {
      const row = await db.updateTable('billing_buckets').set({ ...toColumns(fields), updated_at: now.toISOString() }).where('id', '=', id).returningAll().executeTakeFirst();
      return row && toBucket(row);
    },

    /** Deletes a bucket no user group names and no user belongs to but users marked deleted (who leave it); otherwise says why not. */
    async remove(id: number): Promise<'removed' | 'not_found' | 'in_use' | 'in_group'> {
      try {
        return await db.transaction().execute(async (trx) => {
          if ((await trx.selectFrom('billing_buckets').select('id').where('id', '=', id).executeTakeFirst()) === undefined) return 'not_found';
          const held = await trx.selectFrom('users').select('id').where('bucket_id', '=', id).where('status', '<>', 'deleted').limit(1).executeTakeFirst();
          if (held !== undefined) return 'in_use';
          const named = await trx.selectFrom('user_groups').select('id').where('bucket_id', '=', id).limit(1).executeTakeFirst();
          if (named !== undefined) return 'in_group';
          await trx.updateTable('users').set({ bucket_id: null }).where('bucket_id', '=', id).execute();
          await trx.deleteFrom('billing_buckets').where('id', '=', id).execute();
          return 'removed' as const;
        }).finally(() => database.transactionEnded('users'));
      } catch (error) {
        // A user given the bucket by a transaction that committed meanwhile (PostgreSQL): the foreign key refuses.
        if (database.dialect.constraints.isForeignKeyViolation(error)) return 'in_use';
        throw error;
      }
    },
  };
}

export type BucketsRepository = ReturnType<typeof bucketsRepository>;
