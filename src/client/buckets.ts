import { bucketResource } from '../buckets/bucket.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

/** A billing bucket (docs/api.md#billing-buckets); cmi bills nothing by it. */
export type BillingBucket = RecordOf<typeof bucketResource>;

/** The fields of `POST /billing/buckets`; what is not given is `USD`, `0` and `false`. */
export interface NewBucket {
  label: string;
  /** Three capital letters (ISO 4217). */
  currency_code?: string;
  /** A number, or a string of digits (the server reads it as a number). */
  monthly_price?: number | string;
  show_price?: boolean;
  allows_kms?: boolean;
  allows_mak?: boolean;
  allows_own?: boolean;
}

/** The fields of `PUT /billing/buckets/:id`: any of those of a new bucket. */
export type BucketChanges = Partial<NewBucket>;

const BUCKETS = '/billing/buckets';

/** `client.buckets`: OnApp's billing buckets (docs/client.md#methods). */
export function bucketsApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(bucketResource, http.format === 'json' ? unwrap(bucketResource, answer.body) : answer.body, http.format);
  const path = (id: number) => `${BUCKETS}/${id}`;

  return {
    list(params: PageParams = {}): Promise<Page<BillingBucket>> {
      return fetchPage(http, bucketResource, BUCKETS, params);
    },

    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<BillingBucket, void, undefined> {
      return walkPages((page) => fetchPage(http, bucketResource, BUCKETS, { ...params, page }), (bucket) => bucket.id);
    },

    async get(id: number, call: RequestOptions = {}): Promise<BillingBucket> {
      return one(await http.request('GET', path(id), call));
    },

    async create(fields: NewBucket, call: RequestOptions = {}): Promise<BillingBucket> {
      return one(await http.request('POST', BUCKETS, { ...call, body: { bucket: fields } }));
    },

    /** Answers nothing (204); `get` reads the changed bucket. */
    async update(id: number, changes: BucketChanges, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', path(id), { ...call, body: { bucket: changes } });
    },

    /** A bucket that users belong to is refused (`CmiValidationError`). */
    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(id), call);
    },
  };
}
