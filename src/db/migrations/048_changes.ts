import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** The permissions changes add to the catalogue (roles/permissions.ts), frozen here as migration 016 froze its own. */
const PERMISSIONS: ReadonlyArray<readonly [number, string, string]> = [
  [43, 'changes.read', 'See changes to the cloud and the changes suspected of causing an error'],
  [44, 'changes.manage', 'Record, edit and delete changes to the cloud'],
  [45, 'changes.create', 'Record changes (a CD pipeline\'s write-only key)'],
];

/**
 * Changes to the cloud (docs/changes.md): what was done (`kind`, `title`, `release`), when
 * (`started_at`, `ended_at`, null while it runs) and where (`hosts`, `components`: JSON lists of
 * strings, the empty list meaning all), and who recorded it (`created_by`, a user's id, kept when
 * the user goes). Read by time, so `started_at` is indexed. Administrators hold the new permissions.
 */
export function changesMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('changes'))
        .addColumn('kind', 'varchar(64)', (c) => c.notNull())
        .addColumn('title', 'varchar(255)', (c) => c.notNull())
        .addColumn('release', 'varchar(255)')
        .addColumn('started_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('ended_at', 'varchar(32)')
        .addColumn('hosts', 'text', (c) => c.notNull())
        .addColumn('components', 'text', (c) => c.notNull())
        .addColumn('created_by', 'integer')
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('changes_started_at').on('changes').columns(['started_at', 'id']).execute();
      const at = new Date().toISOString();
      const anyDb = db as Kysely<Record<string, Record<string, unknown>>>;
      await anyDb.insertInto('permissions').values(PERMISSIONS.map(([id, identifier, label]) => ({ id, identifier, label, created_at: at, updated_at: at }))).execute();
      await anyDb.insertInto('role_permissions').values(PERMISSIONS.map(([id]) => ({ role_id: 1, permission_id: id }))).execute();
    },
  };
}
