import type { Kysely } from 'kysely';

/**
 * Ingest keys for the logs the cloud already writes (docs/log-sources.md): `kind` (`sentry`, as every
 * key so far, `otlp`, `journald` or `syslog`), `allowed_networks` (CIDRs, separated by spaces: a syslog
 * line is taken from an address one covers), `client_certificate_sha256` (a syslog sender's TLS client
 * certificate, by its fingerprint), `min_severity` (the least severe record that is an error, on
 * syslog's scale: 3, err, by default). Keys already move the credentials version on every change
 * (migration 022), so a change reaches every process's listeners at once.
 */
export const ingestKeyKindsMigration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('ingest_keys').addColumn('kind', 'varchar(16)', (c) => c.notNull().defaultTo('sentry')).execute();
    await db.schema.alterTable('ingest_keys').addColumn('allowed_networks', 'text', (c) => c.notNull().defaultTo('')).execute();
    await db.schema.alterTable('ingest_keys').addColumn('client_certificate_sha256', 'varchar(64)').execute();
    await db.schema.alterTable('ingest_keys').addColumn('min_severity', 'integer', (c) => c.notNull().defaultTo(3)).execute();
  },
};
