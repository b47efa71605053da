/** A billing bucket as cmi keeps and serves it (wire names, docs/api.md#billing-buckets). */
export interface Bucket {
  id: number;
  label: string;
  currency_code: string;
  monthly_price: number;
  show_price: boolean;
  allows_kms: boolean;
  allows_mak: boolean;
  allows_own: boolean;
  created_at: Date;
  updated_at: Date;
}

/** What a bucket's create and edit set. */
export type BucketFields = Omit<Bucket, 'id' | 'created_at' | 'updated_at'>;
