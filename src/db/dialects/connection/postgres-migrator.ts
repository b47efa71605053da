import {
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type MigrationLockOptions,
  PostgresAdapter,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- reads the catalogue, no table of the schema
type AnyKysely = Kysely<any>;

/** kysely's bookkeeping tables, left out unless asked for as kysely's own introspector does. */
const BOOKKEEPING = ['kysely_migration', 'kysely_migration_lock'];

// What kysely's Migrator asks of PostgreSQL, scoped to the schema cmi's tables are in (the
// connection's current schema, dialects/migrations/postgres.ts), so that migrating one schema
// neither waits for nor trips over another tenant of the same database
// (docs/operations.md#migrations-run-one-at-a-time).

/** The first half of the migration lock's key (the second is the schema's): "cmi migrations". */
const MIGRATION_LOCK_CLASS = 0x636d696d;

/**
 * kysely's PostgreSQL adapter, with the migration run's advisory lock taken per schema: kysely's is
 * one key for the whole database, so schemas migrated at the same moment waited for each other.
 * The Migrator takes it on the run's connection before the run's transaction begins, which reads
 * what is applied; a session-level lock, let go after the commit. The wait is bounded by
 * statement_timeout; the run is then tried again (db/database.ts migrateToLatest).
 */
export class PostgresSchemaLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: AnyKysely, options: MigrationLockOptions): Promise<void> {
    await sql`select pg_advisory_lock(${sql.lit(MIGRATION_LOCK_CLASS)}, hashtext(${options.lockTableSchema ?? 'public'}))`.execute(db);
  }

  override async releaseMigrationLock(db: AnyKysely, options: MigrationLockOptions): Promise<void> {
    await sql`select pg_advisory_unlock(${sql.lit(MIGRATION_LOCK_CLASS)}, hashtext(${options.lockTableSchema ?? 'public'}))`.execute(db);
  }
}



/**
 * What kysely's Migrator asks of the database (does a schema, does its table exist), answered from
 * the connection's current schema alone. kysely's PostgresIntrospector reads every table of every
 * schema, calling functions on each schema's name: a schema someone drops meanwhile (another
 * tenant of a shared database) made the migration run fail with `schema "..." does not exist`,
 * and one process of several started together died
 * (docs/operations.md#migrations-run-one-at-a-time).
 */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: AnyKysely) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.db);
    return rows.map((row) => ({ name: row.name }));
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<{
      table: string;
      schema: string;
      kind: string;
      column: string | null;
      type: string | null;
      nullable: string | null;
      default: string | null;
      identity: string | null;
    }>`select t.table_name as "table", t.table_schema as "schema", t.table_type as "kind", c.column_name as "column",
         c.udt_name as "type", c.is_nullable as "nullable", c.column_default as "default", c.is_identity as "identity"
       from information_schema.tables t
       left join information_schema.columns c on c.table_schema = t.table_schema and c.table_name = t.table_name
       where t.table_schema = current_schema()
       order by t.table_name, c.ordinal_position`.execute(this.db);
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && BOOKKEEPING.includes(row.table)) continue;
      let table = tables.get(row.table);
      if (table === undefined) {
        table = { name: row.table, schema: row.schema, isView: row.kind === 'VIEW', columns: [] };
        tables.set(row.table, table);
      }
      if (row.column === null) continue;
      table.columns.push({
        name: row.column,
        dataType: row.type ?? '',
        isNullable: row.nullable === 'YES',
        hasDefaultValue: row.default !== null,
        isAutoIncrementing: row.identity === 'YES' || (row.default ?? '').startsWith('nextval('),
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
