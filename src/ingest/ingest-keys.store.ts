import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { IngestKeysTable, IngestKeyUsageTable } from '../db/schema.js';
import type { IngestKey, IngestKeyFields } from './ingest-key.js';

type Row = Selectable<IngestKeysTable> & { last_used_at?: string | null; dropped?: Selectable<IngestKeyUsageTable>['dropped'] | null };

function toKey(row: Row): IngestKey {
  return {
    id: Number(row.id), label: row.label, component: row.component, public_key: row.public_key, enabled: Number(row.enabled) === 1,
    rate_limit_per_minute: Number(row.rate_limit_per_minute), allowed_origins: row.allowed_origins,
    kind: row.kind as IngestKey['kind'], allowed_networks: row.allowed_networks, client_certificate_sha256: row.client_certificate_sha256, min_severity: Number(row.min_severity),
    last_used_at: row.last_used_at ? new Date(row.last_used_at) : null, dropped: Number(row.dropped ?? 0),
    created_at: new Date(row.created_at), updated_at: new Date(row.updated_at),
  };
}

const toColumns = (fields: Partial<IngestKeyFields>) => ({
  ...(fields.label !== undefined ? { label: fields.label } : {}),
  ...(fields.component !== undefined ? { component: fields.component } : {}),
  ...(fields.enabled !== undefined ? { enabled: fields.enabled ? 1 : 0 } : {}),
  ...(fields.rate_limit_per_minute !== undefined ? { rate_limit_per_minute: fields.rate_limit_per_minute } : {}),
  ...(fields.allowed_origins !== undefined ? { allowed_origins: fields.allowed_origins } : {}),
  ...(fields.kind !== undefined ? { kind: fields.kind } : {}),
  ...(fields.allowed_networks !== undefined ? { allowed_networks: fields.allowed_networks } : {}),
  ...(fields.client_certificate_sha256 !== undefined ? { client_certificate_sha256: fields.client_certificate_sha256 } : {}),
  ...(fields.min_severity !== undefined ? { min_severity: fields.min_severity } : {}),
});

/** The only SQL of ingest_keys and ingest_key_usage (migration 022). */
export function ingestKeysRepository({ db }: Database) {
  const withUsage = () => db.selectFrom('ingest_keys')
    .leftJoin('ingest_key_usage', 'ingest_key_usage.key_id', 'ingest_keys.id')
    .selectAll('ingest_keys')
    .select(['ingest_key_usage.last_used_at', 'ingest_key_usage.dropped']);

  return {
    async page(limit: number, offset: number): Promise<{ items: IngestKey[]; total: number }> {
      const { n } = await db.selectFrom('ingest_keys').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await withUsage().orderBy('ingest_keys.id').limit(limit).offset(offset).execute();
      return { items: rows.map(toKey), total: Number(n) };
    },

    async find(id: number): Promise<IngestKey | undefined> {
      const row = await withUsage().where('ingest_keys.id', '=', id).executeTakeFirst();
      return row && toKey(row);
    },

    /** The enabled keys of the log sources (every kind but `sentry`), by id: few, read whole (docs/log-sources.md). */
    async logSourceKeys(): Promise<IngestKey[]> {
      const rows = await withUsage().where('ingest_keys.kind', '!=', 'sentry').where('ingest_keys.enabled', '=', 1).orderBy('ingest_keys.id').execute();
      return rows.map(toKey);
    },

    async create(fields: IngestKeyFields, publicKey: string, now: Date): Promise<IngestKey> {
      const at = now.toISOString();
      const row = await db.insertInto('ingest_keys')
        .values({ ...toColumns(fields), label: fields.label, enabled: fields.enabled ? 1 : 0, rate_limit_per_minute: fields.rate_limit_per_minute, allowed_origins: fields.allowed_origins, public_key: publicKey, created_at: at, updated_at: at })
        .returningAll().executeTakeFirstOrThrow();
      return toKey(row);
    },

    async update(id: number, fields: Partial<IngestKeyFields>, now: Date): Promise<boolean> {
      const result = await db.updateTable('ingest_keys').set({ ...toColumns(fields), updated_at: now.toISOString() }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async remove(id: number): Promise<boolean> {
      await db.deleteFrom('ingest_key_usage').where('key_id', '=', id).execute();
      const result = await db.deleteFrom('ingest_keys').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** Adds each key's use since the last call: its last use and the events it had dropped (keys gone meanwhile are skipped). */
    async recordUsage(usage: ReadonlyArray<{ keyId: number; lastUsedAt: Date; dropped: number }>): Promise<void> {
      for (const { keyId, lastUsedAt, dropped } of usage) {
        const at = lastUsedAt.toISOString();
        await sql`insert into ingest_key_usage (key_id, last_used_at, dropped)
          select id, ${at}, ${dropped} from ingest_keys where id = ${keyId}
          on conflict (key_id) do update set
            last_used_at = case when ingest_key_usage.last_used_at is null or ingest_key_usage.last_used_at < excluded.last_used_at then excluded.last_used_at else ingest_key_usage.last_used_at end,
            dropped = ingest_key_usage.dropped + excluded.dropped`.execute(db);
      }
    },
  };
}

export type IngestKeysRepository = ReturnType<typeof ingestKeysRepository>;
