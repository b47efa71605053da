import type { AuditRecorder } from '../audit/audit-trail.js';
import { changedFields } from '../audit/audit-event.js';
import { randomBytes } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { FieldErrors, NotFound } from '../shared/problems.js';
import { flagOf, stringField, unwrapRecord } from '../shared/request-body.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import { INGEST_KEY_KINDS, type IngestKey, type IngestKeyFields, type IngestKeyKind, type ServedIngestKey } from './ingest-key.js';
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

const MAX_NETWORKS = 64;
const SEVERITIES = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'];

/** One network as a CIDR (`192.0.2.0/24`, `2001:db8::/32`; a bare address is its /32 or /128), lower case; undefined when it is none. */
function networkOf(text: string): string | undefined {
  const [address = '', prefix, extra] = text.toLowerCase().split('/');
  if (extra !== undefined) return undefined;
  const bits = isIPv4(address) ? 32 : isIPv6(address) ? 128 : 0;
  if (bits === 0) return undefined;
  if (prefix === undefined) return `${address}/${bits}`;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= bits ? `${address}/${Number(prefix)}` : undefined;
}

/** `allowed_networks` as a string of CIDRs separated by spaces, commas or lines, or a list of them (XML: `<item>`s). */
function networksOf(value: unknown, errors: FieldErrors): string | undefined {
  const list = typeof value === 'string' ? value.split(/[\s,]+/).filter((part) => part !== '')
    : Array.isArray(value) ? value
    : typeof value === 'object' && value !== null && Object.keys(value).length === 1 && 'item' in value ? [value.item].flat() : undefined;
  const networks = list?.map((item) => (typeof item === 'string' ? networkOf(item) : undefined));
  if (networks === undefined || networks.includes(undefined)) {
    errors.add('allowed_networks', 'must hold networks such as 192.0.2.0/24 or 2001:db8::/32 (or single addresses)');
    return undefined;
  }
  if (networks.length > MAX_NETWORKS) {
    errors.add('allowed_networks', `must hold at most ${MAX_NETWORKS} networks`);
    return undefined;
  }
  return [...new Set(networks)].join(' ');
}

/** A severity as a number (0-7) or syslog's name (`err`, `warning`...), as its number. */
function severityOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= 7 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  return /^[0-7]$/.test(text) ? Number(text) : SEVERITIES.includes(text) ? SEVERITIES.indexOf(text) : undefined;
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
  const kind = fields['kind'];
  if (kind !== undefined && kind !== null) {
    if (!required) errors.add('kind', 'cannot change: make a new key');
    else if (typeof kind !== 'string' || !INGEST_KEY_KINDS.includes(kind as IngestKeyKind)) errors.add('kind', `must be one of ${INGEST_KEY_KINDS.join(', ')}`);
    else out.kind = kind as IngestKeyKind;
  }
  const networks = fields['allowed_networks'];
  if (networks === null || networks === '') out.allowed_networks = '';
  else if (networks !== undefined) {
    const parsed = networksOf(networks, errors);
    if (parsed !== undefined) out.allowed_networks = parsed;
  }
  const certificate = fields['client_certificate_sha256'];
  if (certificate === null || certificate === '') out.client_certificate_sha256 = null;
  else if (certificate !== undefined) {
    const hex = typeof certificate === 'string' ? certificate.trim().replaceAll(':', '').toLowerCase() : '';
    if (!/^[0-9a-f]{64}$/.test(hex)) errors.add('client_certificate_sha256', 'must be the SHA-256 of a certificate: 64 hexadecimal characters (colons allowed)');
    else out.client_certificate_sha256 = hex;
  }
  const severity = fields['min_severity'];
  if (severity !== undefined && severity !== null) {
    const number = severityOf(severity);
    if (number === undefined) errors.add('min_severity', `must be a severity from 0 to 7, or one of ${SEVERITIES.join(', ')}`);
    else out.min_severity = number;
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
 * A client certificate is a syslog sender's (TLS to cmi's listener): cmi serves HTTP, so no OTLP or
 * journal request ever shows one, and a key that asked for one would refuse every request.
 */
function certificateOnlyForSyslog(kind: string, fields: Partial<IngestKeyFields>): void {
  if (kind === 'syslog' || fields.client_certificate_sha256 === undefined || fields.client_certificate_sha256 === null) return;
  const errors = new FieldErrors();
  errors.add('client_certificate_sha256', 'is for syslog keys only (cmi serves HTTP: a TLS proxy in front of it holds the client certificates)');
  errors.throwIfAny();
}

/**
 * Ingest keys (docs/api.md#ingest-keys): administrators create, read, edit and revoke them. The keys
 * that ingestion reads are kept in memory while the credentials version holds (a change to a key in
 * any process moves it: migration 022), so a revoked or disabled key is refused at once everywhere;
 * without that signal every ingestion reads its key.
 */
export function ingestKeysService(repository: IngestKeysRepository, clock: Clock, audit: AuditRecorder, others: KeyChanges) {
  // The public key (the DSN's secret part) is never recorded: audit/audit-event.ts redacts `public_key`.
  const audited = (key: IngestKey) => ({
    label: key.label, component: key.component, enabled: key.enabled, rate_limit_per_minute: key.rate_limit_per_minute, allowed_origins: key.allowed_origins,
    kind: key.kind, allowed_networks: key.allowed_networks, client_certificate_sha256: key.client_certificate_sha256, min_severity: key.min_severity,
  });
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
  // The log sources' keys, read whole (they are few): kept like `cached`, with the version they were read under.
  let logKeys: { generation: number; keys: Promise<IngestKey[]> } | undefined;
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
      certificateOnlyForSyslog(fields.kind ?? 'sentry', fields);
      const key = await repository.create({
        label: fields.label as string,
        component: fields.component ?? null,
        enabled: fields.enabled ?? true,
        rate_limit_per_minute: fields.rate_limit_per_minute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
        allowed_origins: fields.allowed_origins ?? '',
        kind: fields.kind ?? 'sentry',
        allowed_networks: fields.allowed_networks ?? '',
        client_certificate_sha256: fields.client_certificate_sha256 ?? null,
        min_severity: fields.min_severity ?? 3,
      }, randomBytes(16).toString('hex'), clock());
      changed();
      await recordKey(actor, 'ingest_key.create', key.id, audited(key));
      return serve(key, base);
    },

    async update(actor: Actor, id: number, body: unknown): Promise<void> {
      assertPermitted(actor, 'ingest_keys.update');
      const fields = readKeyFields(body, false);
      const before = await repository.find(id);
      if (before !== undefined) certificateOnlyForSyslog(before.kind, fields);
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

    /**
     * The enabled keys of the log sources (docs/log-sources.md), as `forIngestion` reads keys: from
     * memory while no key changed anywhere. Syslog matches every line's sender against them.
     */
    async logSourceKeys(): Promise<IngestKey[]> {
      const heard = others.heard();
      if (heard !== undefined) await heard;
      const trusted = follow();
      if (trusted && logKeys !== undefined && logKeys.generation === generation) return logKeys.keys;
      const since = generation;
      const keys = repository.logSourceKeys();
      if (trusted) logKeys = { generation: since, keys };
      keys.catch(() => {
        if (logKeys?.keys === keys) logKeys = undefined;
      });
      return keys;
    },

    recordUsage: (usage: Parameters<IngestKeysRepository['recordUsage']>[0]) => repository.recordUsage(usage),
  };
}

export type IngestKeysService = ReturnType<typeof ingestKeysService>;
