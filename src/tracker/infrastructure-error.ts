/** A recorded infrastructure error: the spec's nine fields, by their wire names (docs/api.md#infrastructure-errors). */
export interface InfrastructureError {
  id: number;
  backtrace: string;
  counter: number;
  created_at: Date;
  error_class: string;
  fingerprint: string;
  message: string;
  reported: boolean;
  updated_at: Date;
}
