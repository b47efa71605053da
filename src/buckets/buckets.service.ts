import type { AuditRecorder } from '../audit/audit-trail.js';
import { changedFields, fieldsOf } from '../audit/audit-event.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { FieldErrors, NotFound, Unprocessable } from '../shared/problems.js';
import { flagOf, stringField, unwrapRecord } from '../shared/request-body.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { Bucket, BucketFields } from './bucket.js';
import type { BucketsRepository } from './buckets.store.js';

export const BUCKET_IN_USE_REFUSAL = 'A bucket that users belong to cannot be deleted';
export const BUCKET_IN_GROUP_REFUSAL = 'A bucket that user groups use cannot be deleted';

const FLAGS = ['show_price', 'allows_kms', 'allows_mak', 'allows_own'] as const;
/** What a new bucket holds where the body says nothing. */
const DEFAULTS: Omit<BucketFields, 'label'> = { currency_code: 'USD', monthly_price: 0, show_price: false, allows_kms: false, allows_mak: false, allows_own: false };

/** Reads the bucket fields present in the body (wrapped in `bucket` or not), naming every bad one in one 422. */
function readBucketFields(body: unknown, required: boolean): Partial<BucketFields> {
  const fields = unwrapRecord(body ?? {}, 'bucket');
  const errors = new FieldErrors();
  const out: Partial<BucketFields> = {};
  const label = stringField(fields, 'label', errors, { required, max: 255 });
  if (label !== undefined) out.label = label;
  const currency = stringField(fields, 'currency_code', errors, { required: false, max: 3 });
  if (currency !== undefined && !/^[A-Z]{3}$/.test(currency)) errors.add('currency_code', 'must be three capital letters (ISO 4217)');
  else if (currency !== undefined) out.currency_code = currency;
  const price = fields['monthly_price'];
  if (price !== undefined && price !== null) {
    const number = typeof price === 'number' ? price : typeof price === 'string' && /^\d+(\.\d+)?$/.test(price.trim()) ? Number(price) : NaN;
    if (!Number.isFinite(number) || number < 0) errors.add('monthly_price', 'must be a number of at least 0');
    else out.monthly_price = number;
  }
  for (const name of FLAGS) {
    const value = fields[name];
    if (value === undefined || value === null) continue;
    const flag = flagOf(value);
    if (flag === undefined) errors.add(name, 'must be true or false');
    else out[name] = flag;
  }
  errors.throwIfAny();
  return out;
}

/** Billing buckets (docs/api.md#billing-buckets): labels with OnApp's fields; cmi bills nothing. */
export function bucketsService(repository: BucketsRepository, clock: Clock, audit: AuditRecorder) {
  const recordBucket = (actor: Actor, action: string, id: number, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'bucket', target_id: id, changes });

  async function find(actor: Actor, id: number): Promise<Bucket> {
    assertPermitted(actor, 'buckets.read');
    const bucket = await repository.find(id);
    if (!bucket) throw new NotFound();
    return bucket;
  }

  return {
    async list(actor: Actor, limit: number, offset: number): Promise<Page<Bucket>> {
      assertPermitted(actor, 'buckets.read');
      return repository.page(limit, offset);
    },

    get: find,

    async create(actor: Actor, body: unknown): Promise<Bucket> {
      assertPermitted(actor, 'buckets.create');
      const fields = readBucketFields(body, true);
      const bucket = await repository.create({ ...DEFAULTS, ...fields, label: fields.label as string }, clock());
      await recordBucket(actor, 'bucket.create', bucket.id, fieldsOf(bucket));
      return bucket;
    },

    async update(actor: Actor, id: number, body: unknown): Promise<Bucket> {
      assertPermitted(actor, 'buckets.update');
      const before = await repository.find(id);
      const bucket = await repository.update(id, readBucketFields(body, false), clock());
      if (!bucket || !before) throw new NotFound();
      await recordBucket(actor, 'bucket.update', id, changedFields(before, bucket));
      return bucket;
    },

    async remove(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'buckets.delete');
      const before = await repository.find(id);
      const outcome = await repository.remove(id);
      if (outcome === 'not_found') throw new NotFound();
      if (outcome === 'in_use') throw new Unprocessable({ base: [BUCKET_IN_USE_REFUSAL] });
      if (outcome === 'in_group') throw new Unprocessable({ base: [BUCKET_IN_GROUP_REFUSAL] });
      await recordBucket(actor, 'bucket.delete', id, before === undefined ? {} : { label: before.label });
    },
  };
}

export type BucketsService = ReturnType<typeof bucketsService>;
