import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** The permissions identity providers add to the catalogue (roles/permissions.ts), frozen here as migration 016 froze its own. */
const PERMISSIONS: ReadonlyArray<readonly [number, string, string]> = [
  [41, 'identity_providers.read', 'See identity providers (never their secrets)'],
  [42, 'identity_providers.manage', 'Create, edit and delete identity providers'],
];

/**
 * Signing in through the identity the organisation runs (docs/security.md#identity-providers):
 * `identity_providers` (OpenID Connect, SAML 2.0 or LDAP; `settings` and `mappings` as JSON text, the
 * settings' secrets among them, never answered), `user_identities` (which person at which provider is
 * which account: the provider's stable subject, once per provider) and `sso_attempts` (a browser's
 * sign-in while it is away at the provider: what the protocol must find again on its return, the hash
 * of the key the browser's cookie holds, where to go next, the address it began from; single use, ten
 * minutes). A change to
 * the providers moves the credentials version like a change to a user (migrations 015, 019, 021): a
 * directory's passwords cached for Basic authentication stop working at once when its provider
 * is disabled, changed or removed. Administrators hold the new permissions.
 */
export function identityProvidersMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('identity_providers'))
        .addColumn('kind', 'varchar(8)', (c) => c.notNull())
        .addColumn('label', 'varchar(255)', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('settings', 'text', (c) => c.notNull())
        .addColumn('mappings', 'text', (c) => c.notNull())
        .addColumn('jit_provisioning', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await dialect.tables.addIdColumn(db.schema.createTable('user_identities'))
        .addColumn('provider_id', 'integer', (c) => c.notNull().references('identity_providers.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('subject', 'varchar(1024)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('last_sign_in_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('user_identities_provider_subject').on('user_identities').columns(['provider_id', 'subject']).unique().execute();
      await db.schema.createIndex('user_identities_user').on('user_identities').column('user_id').execute();
      await db.schema.createTable('sso_attempts')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('provider_id', 'integer', (c) => c.notNull().references('identity_providers.id').onDelete('cascade'))
        .addColumn('browser_key_hash', 'varchar(64)', (c) => c.notNull())
        .addColumn('protocol', 'text', (c) => c.notNull())
        .addColumn('next', 'varchar(2048)', (c) => c.notNull())
        .addColumn('address', 'varchar(64)', (c) => c.notNull())
        .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('expires_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sso_attempts_expires_at').on('sso_attempts').column('expires_at').execute();
      await db.schema.createIndex('sso_attempts_address').on('sso_attempts').column('address').execute();
      await dialect.changeNotifications.addCredentialChanges(db, ['identity_providers', 'user_identities']);
      const at = new Date().toISOString();
      const anyDb = db as Kysely<Record<string, Record<string, unknown>>>;
      await anyDb.insertInto('permissions').values(PERMISSIONS.map(([id, identifier, label]) => ({ id, identifier, label, created_at: at, updated_at: at }))).execute();
      await anyDb.insertInto('role_permissions').values(PERMISSIONS.map(([id]) => ({ role_id: 1, permission_id: id }))).execute();
    },
  };
}
