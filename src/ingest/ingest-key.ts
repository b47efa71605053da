import { INGEST_KEY_KINDS } from './ingest-key.resource.js';

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
  /** What sends with it (docs/log-sources.md): Sentry SDKs, OpenTelemetry exporters, systemd-journal-upload or syslog senders. Never changes. */
  kind: IngestKeyKind;
  /** A syslog key's networks (CIDRs, separated by spaces): a line from an address one covers is taken with this key. */
  allowed_networks: string;
  /** A syslog key's TLS client certificate, by the SHA-256 of its DER (64 lowercase hexadecimal characters). */
  client_certificate_sha256: string | null;
  /** The least severe record that is an error, on syslog's scale (0 emerg ... 3 err ... 7 debug): a log source's threshold. */
  min_severity: number;
  last_used_at: Date | null;
  /** Events refused for the rate limit, in all processes (written every few seconds). */
  dropped: number;
  created_at: Date;
  updated_at: Date;
}

export { INGEST_KEY_KINDS };
export type IngestKeyKind = (typeof INGEST_KEY_KINDS)[number];

/** What a key's create and edit set. */
export type IngestKeyFields = Pick<IngestKey, 'label' | 'component' | 'enabled' | 'rate_limit_per_minute' | 'allowed_origins' | 'kind' | 'allowed_networks' | 'client_certificate_sha256' | 'min_severity'>;

/** A key as served: with its DSN. */
export type ServedIngestKey = IngestKey & { dsn: string };
