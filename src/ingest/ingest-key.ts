/** An ingest key as cmi keeps it (docs/sentry.md#ingest-keys); `dsn` is made when it is served. */
export interface IngestKey {
  id: number;
  label: string;
  /** The component its events are recorded for when an event names none. */
  component: string | null;
  /** What the SDK sends (the DSN's user part): 32 hexadecimal characters. */
  public_key: string;
  enabled: boolean;
  rate_limit_per_minute: number;
  /** Origins browsers may send from, separated by spaces; `*` any. Empty: no browser. */
  allowed_origins: string;
  last_used_at: Date | null;
  /** Events refused for the rate limit, in all processes (written every few seconds). */
  dropped: number;
  created_at: Date;
  updated_at: Date;
}

/** What a key's create and edit set. */
export type IngestKeyFields = Pick<IngestKey, 'label' | 'component' | 'enabled' | 'rate_limit_per_minute' | 'allowed_origins'>;

/** A key as served: with its DSN. */
export type ServedIngestKey = IngestKey & { dsn: string };
