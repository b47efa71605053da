import type { AuditRecorder } from '../audit/audit-trail.js';
import { changedFields } from '../audit/audit-event.js';
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { FieldErrors, NotFound } from '../shared/problems.js';
import { flagOf, stringField, unwrapRecord } from '../shared/request-body.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { IngestKey, IngestKeyFields, ServedIngestKey } from './ingest-key.js';
import type { IngestKeysRepository } from './ingest-keys.store.js';

/** What a new key holds where the body says nothing. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 1000;
const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000;
const MAX_ORIGINS_CHARS = 4096;
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(?::\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/** `allowed_origins` as a string of origins separated by spaces, commas or lines, or a list of them (XML: `<item>`s). */
function originsOf(value: unknown, errors: FieldErrors): string | undefined {
  let list: unknown[];
  if (typeof value === 'string') list = value.split(/[\s,]+/).filter((part) => part !== '');
  else if (Array.isArray(value)) list = value;
  else if (typeof value === 'object' && value !== null && Object.keys(value).length === 1 && 'item' in value) list = [value.item].flat();
  else {
    errors.add('allowed_origins', 'must be a string of origins or a list of them');
    return undefined;
  }
  const origins: string[] = [];
  for (const origin of list) {
    if (typeof origin !== 'string' || (origin !== '*' && !ORIGIN.test(origin))) {
      errors.add('allowed_origins', 'must hold origins such as https://app.example.com (scheme, host and port only) or *');
      return undefined;
    }
    const normalized = origin === '*' ? origin : origin.toLowerCase();
    if (!origins.includes(normalized)) origins.push(normalized);
  }
  const joined = origins.join(' ');
  if (joined.length > MAX_ORIGINS_CHARS) {
    errors.add('allowed_origins', `is too long (maximum is ${MAX_ORIGINS_CHARS} characters)`);
    return undefined;
  }
  return joined;
}

/** Reads the fields present in the body (wrapped in `ingest_key` or not), naming every bad one in one 422. */
function readKeyFields(body: unknown, required: boolean): Partial<IngestKeyFields> {
  const fields = unwrapRecord(body ?? {}, 'ingest_key');
  const errors = new FieldErrors();
  const out: Partial<IngestKeyFields> = {};
  const label = stringField(fields, 'label', errors, { required, max: 255 });
  if (label !== undefined) out.label = label;
  if (fields['component'] === null) out.component = null;
  else {
    const component = stringField(fields, 'component', errors, { required: false, max: 255 });
    if (component !== undefined) out.component = component.trim() === '' ? null : component.trim();
  }
  if (fields['enabled'] !== undefined && fields['enabled'] !== null) {
    const enabled = flagOf(fields['enabled']);
    if (enabled === undefined) errors.add('enabled', 'must be true or false');
    else out.enabled = enabled;
  }
  const limit = fields['rate_limit_per_minute'];
  if (limit !== undefined && limit !== null) {
    const number = typeof limit === 'number' ? limit : typeof limit === 'string' && /^\s*\d{1,7}\s*$/.test(limit) ? Number(limit) : NaN;
    if (!Number.isInteger(number) || number < 1 || number > MAX_RATE_LIMIT_PER_MINUTE) errors.add('rate_limit_per_minute', `must be an integer from 1 to ${MAX_RATE_LIMIT_PER_MINUTE}`);
    else out.rate_limit_per_minute = number;
  }
  const origins = fields['allowed_origins'];
  if (origins === null || origins === '') out.allowed_origins = '';
  else if (origins !== undefined) {
    const parsed = originsOf(origins, errors);
    if (parsed !== undefined) out.allowed_origins = parsed;
  }
  errors.throwIfAny();
  return out;
}

/**
 * The DSN of a key (docs/sentry.md#the-dsn): `<scheme>://<public_key>@<host>[:port][/path]/<id>`,
 * from `base`, the public URL of cmi (CMI_PUBLIC_URL, or the address the request reached).
 */
export function dsnOf(key: Pick<IngestKey, 'id' | 'public_key'>, base: string): string {
  const url = new URL(base);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${key.public_key}@${url.host}${path}/${key.id}`;
}

/** What the database says of other processes' changes to credentials (users/verification-cache.ts OthersChanges). */
export interface KeyChanges {
  version(): string | undefined;
  heard(): Promise<void> | undefined;
}

/**
 * Ingest keys (docs/api.md#ingest-keys): administrators create, read, edit and revoke them. The keys
 * that ingestion reads are kept in memory while the credentials version holds (a change to a key in
 * any process moves it: migration 022), so a revoked or disabled key is refused at once everywhere;
 * without that signal every ingestion reads its key.
 */
export function ingestKeysService(repository: IngestKeysRepository, clock: Clock, audit: AuditRecorder, others: KeyChanges) {
  // The public key (the DSN's secret part) is never recorded: audit/audit-event.ts redacts `public_key`.
  const audited = (key: IngestKey) => ({ label: key.label, component: key.component, enabled: key.enabled, rate_limit_per_minute: key.rate_limit_per_minute, allowed_origins: key.allowed_origins });
  const recordKey = (actor: Actor, action: string, id: number, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'ingest_key', target_id: id, changes });

  const serve = (key: IngestKey, base: string): ServedIngestKey => ({ ...key, dsn: dsnOf(key, base) });

  // Keys ingestion read, by id, while `seen` (the credentials version) holds; `generation` moves with
  // this process's own changes, so a read begun before one stores nothing. Bounded (lru-cache): past
  // MAX_CACHED ids, the one read longest ago goes. `false`: there is no such key (lru-cache keeps no null).
  const MAX_CACHED = 10_000;
  const cached = new LRUCache<number, IngestKey | false>({ max: MAX_CACHED });
  let seen: string | undefined;
  let generation = 0;
  const changed = () => {
    generation += 1;
    cached.clear();
  };
  const follow = (): boolean => {
    const version = others.version();
    if (version === undefined) {
      cached.clear();
      seen = undefined;
      return false;
    }
    if (version !== seen) {
      cached.clear();
      seen = version;
      generation += 1;
    }
    return true;
  };

  return {
    async list(actor: Actor, limit: number, offset: number, base: string): Promise<Page<ServedIngestKey>> {
      assertPermitted(actor, 'ingest_keys.read');
      const { items, total } = await repository.page(limit, offset);
      return { items: items.map((key) => serve(key, base)), total };
    },

    async get(actor: Actor, id: number, base: string): Promise<ServedIngestKey> {
      assertPermitted(actor, 'ingest_keys.read');
      const key = await repository.find(id);
      if (!key) throw new NotFound();
      return serve(key, base);
    },

    async create(actor: Actor, body: unknown, base: string): Promise<ServedIngestKey> {
      assertPermitted(actor, 'ingest_keys.create');
      const fields = readKeyFields(body, true);
      const key = await repository.create({
        label: fields.label as string,
        component: fields.component ?? null,
        enabled: fields.enabled ?? true,
        rate_limit_per_minute: fields.rate_limit_per_minute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
        allowed_origins: fields.allowed_origins ?? '',
      }, randomBytes(16).toString('hex'), clock());
      changed();
      await recordKey(actor, 'ingest_key.create', key.id, audited(key));
      return serve(key, base);
    },

    async update(actor: Actor, id: number, body: unknown): Promise<void> {
      assertPermitted(actor, 'ingest_keys.update');
      const fields = readKeyFields(body, false);
      const before = await repository.find(id);
      const found = await repository.update(id, fields, clock());
      changed();
      if (!found || !before) throw new NotFound();
      const after = await repository.find(id);
      await recordKey(actor, 'ingest_key.update', id, after === undefined ? {} : changedFields(audited(before), audited(after)));
    },

    /** Revokes the key: deleted, refused by every process from now on. */
    async remove(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'ingest_keys.delete');
      const before = await repository.find(id);
      const found = await repository.remove(id);
      changed();
      if (!found) throw new NotFound();
      await recordKey(actor, 'ingest_key.revoke', id, before === undefined ? {} : { label: before.label, component: before.component });
    },

    /** The key with this id as ingestion sees it now (null: there is none), from memory while no key changed anywhere. */
    async forIngestion(id: number): Promise<IngestKey | null> {
      const heard = others.heard();
      if (heard !== undefined) await heard;
      const trusted = follow();
      const known = trusted ? cached.get(id) : undefined;
      if (known !== undefined) return known === false ? null : known;
      const since = generation;
      const key = (await repository.find(id)) ?? null;
      if (trusted && follow() && since === generation) {
        cached.set(id, key ?? false);
      }
      return key;
    },

    recordUsage: (usage: Parameters<IngestKeysRepository['recordUsage']>[0]) => repository.recordUsage(usage),
  };
}

export type IngestKeysService = ReturnType<typeof ingestKeysService>;
