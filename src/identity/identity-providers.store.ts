import type { Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import type { IdentityProvidersTable } from '../db/schema.js';
import type { IdentityProvider, ProviderFields, ProviderKind, ProviderMapping, ProviderSettings } from './identity-provider.js';

const columns = ['id', 'kind', 'label', 'enabled', 'settings', 'mappings', 'jit_provisioning', 'created_at', 'updated_at'] as const;

const toProvider = (row: Selectable<IdentityProvidersTable>): IdentityProvider => ({
  id: Number(row.id),
  kind: row.kind as ProviderKind,
  label: row.label,
  enabled: Number(row.enabled) === 1,
  settings: JSON.parse(row.settings) as ProviderSettings,
  mappings: JSON.parse(row.mappings) as ProviderMapping[],
  jit_provisioning: Number(row.jit_provisioning) === 1,
  created_at: new Date(row.created_at),
  updated_at: new Date(row.updated_at),
});

const rowOf = (fields: ProviderFields) => ({
  kind: fields.kind,
  label: fields.label,
  enabled: fields.enabled ? 1 : 0,
  settings: JSON.stringify(fields.settings),
  mappings: JSON.stringify(fields.mappings),
  jit_provisioning: fields.jit_provisioning ? 1 : 0,
});

/** A browser's sign-in while it is at the provider (migration 038), as the console's SSO routes keep it. */
export interface SsoAttempt {
  id: string;
  provider_id: number;
  browser_key_hash: string;
  /** What the protocol must find again, as its module gave it (OIDC's state, nonce, verifier; SAML's request id). */
  protocol: Record<string, string>;
  next: string;
  /** The address the browser began from (at most MAX_ATTEMPTS_AN_ADDRESS under way from one). */
  address: string;
  user_id: number | null;
  expires_at: Date;
}

/** The SQL of `identity_providers`, `user_identities` and `sso_attempts` (migration 038). */
export function identityProvidersRepository({ db }: Database) {
  return {
    async count(): Promise<number> {
      const row = await db.selectFrom('identity_providers').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async page(limit: number, offset: number): Promise<IdentityProvider[]> {
      return (await db.selectFrom('identity_providers').select(columns).orderBy('id').limit(limit).offset(offset).execute()).map(toProvider);
    },

    /** Every enabled provider of `kind`, in id order (the sign-in page's buttons; the password paths' directories). */
    async enabled(kind?: ProviderKind): Promise<IdentityProvider[]> {
      let query = db.selectFrom('identity_providers').select(columns).where('enabled', '=', 1);
      if (kind !== undefined) query = query.where('kind', '=', kind);
      return (await query.orderBy('id').execute()).map(toProvider);
    },

    async find(id: number): Promise<IdentityProvider | undefined> {
      const row = await db.selectFrom('identity_providers').select(columns).where('id', '=', id).executeTakeFirst();
      return row && toProvider(row);
    },

    async create(fields: ProviderFields, now: Date): Promise<IdentityProvider> {
      const at = now.toISOString();
      return toProvider(await db.insertInto('identity_providers').values({ ...rowOf(fields), created_at: at, updated_at: at }).returning(columns).executeTakeFirstOrThrow());
    },

    async update(id: number, fields: ProviderFields, now: Date): Promise<IdentityProvider | undefined> {
      const row = await db.updateTable('identity_providers').set({ ...rowOf(fields), updated_at: now.toISOString() }).where('id', '=', id).returning(columns).executeTakeFirst();
      return row && toProvider(row);
    },

    async remove(id: number): Promise<boolean> {
      const rows = await db.deleteFrom('identity_providers').where('id', '=', id).returning('id').execute();
      return rows.length > 0;
    },

    /** The account linked to `subject` at the provider, if any. */
    async linkedUser(providerId: number, subject: string): Promise<number | undefined> {
      const row = await db.selectFrom('user_identities').select('user_id').where('provider_id', '=', providerId).where('subject', '=', subject).executeTakeFirst();
      return row && Number(row.user_id);
    },

    /** Links `subject` at the provider to `userId` (a first sign-in); false when it is linked already. */
    async link(providerId: number, subject: string, userId: number, now: Date): Promise<boolean> {
      const at = now.toISOString();
      const rows = await db.insertInto('user_identities').values({ provider_id: providerId, subject, user_id: userId, created_at: at, last_sign_in_at: at })
        .onConflict((oc) => oc.columns(['provider_id', 'subject']).doNothing()).returning('id').execute();
      return rows.length > 0;
    },

    async signedIn(providerId: number, subject: string, now: Date): Promise<void> {
      await db.updateTable('user_identities').set({ last_sign_in_at: now.toISOString() }).where('provider_id', '=', providerId).where('subject', '=', subject).execute();
    },

    /** Whether `userId` is linked to any provider (then it has no cmi password unless an administrator gave it one). */
    async isLinked(userId: number): Promise<boolean> {
      return (await db.selectFrom('user_identities').select('id').where('user_id', '=', userId).limit(1).executeTakeFirst()) !== undefined;
    },

    async saveAttempt(attempt: SsoAttempt): Promise<void> {
      await db.insertInto('sso_attempts').values({ ...attempt, protocol: JSON.stringify(attempt.protocol), expires_at: attempt.expires_at.toISOString() }).execute();
    },

    async findAttempt(id: string): Promise<SsoAttempt | undefined> {
      const row = await db.selectFrom('sso_attempts').selectAll().where('id', '=', id).executeTakeFirst();
      return row && { ...row, provider_id: Number(row.provider_id), protocol: JSON.parse(row.protocol) as Record<string, string>, user_id: row.user_id === null ? null : Number(row.user_id), expires_at: new Date(row.expires_at) };
    },

    /** Records the account the provider's answer named (SAML's return), once: false when it was recorded already. */
    async attemptAnswered(id: string, userId: number): Promise<boolean> {
      const rows = await db.updateTable('sso_attempts').set({ user_id: userId }).where('id', '=', id).where('user_id', 'is', null).returning('id').execute();
      return rows.length > 0;
    },

    /** Takes the attempt away (single use): false when another request took it first. */
    async takeAttempt(id: string): Promise<boolean> {
      const rows = await db.deleteFrom('sso_attempts').where('id', '=', id).returning('id').execute();
      return rows.length > 0;
    },

    /** Sign-ins under way, in all or from `address`. */
    async countAttempts(address?: string): Promise<number> {
      let query = db.selectFrom('sso_attempts').select((eb) => eb.fn.countAll<number | string>().as('n'));
      if (address !== undefined) query = query.where('address', '=', address);
      return Number((await query.executeTakeFirstOrThrow()).n);
    },

    /** Drops the `count` sign-ins begun longest ago (the table is full). */
    async dropOldestAttempts(count: number): Promise<void> {
      const oldest = db.selectFrom('sso_attempts').select('id').orderBy('expires_at').limit(count);
      await db.deleteFrom('sso_attempts').where('id', 'in', oldest).execute();
    },

    async pruneAttempts(now: Date): Promise<void> {
      await db.deleteFrom('sso_attempts').where('expires_at', '<', now.toISOString()).execute();
    },
  };
}

export type IdentityProvidersRepository = ReturnType<typeof identityProvidersRepository>;
