import { loadConfig } from '../../config.js';
import { connectionFailureLine, connectionFailureOf } from '../../db/dialects/connection/connection-failure.js';
import { DatabaseMissing, openDatabase, type SchemaState, schemaState } from '../../db/database.js';
import { displayDatabaseUrl } from '../../db/database-url.js';
import { cmiReleaseVersion } from '../../version/version.js';
import { exact, human, type Output } from '../common/output.js';
import { cliEnv } from '../common/io.js';

/** What `cmi version --local` reports: this cmi, and the schema of the configured database (docs/operations.md#know-what-runs). */
export interface LocalVersion {
  cmi: string;
  onapp_version: string;
  node: string;
  database: string;
  /** The last migration the database has applied; null when it cannot be read or was never migrated. */
  schema_version: string | null;
  /** The schema version this cmi needs (its last migration). */
  schema_latest: string | null;
  migrations_pending: string[] | null;
  /** Why the schema could not be read, one line; null when it was. */
  database_problem: string | null;
}

/** Reads the configured database's schema without creating or migrating anything. */
async function readSchema(config: ReturnType<typeof loadConfig>): Promise<SchemaState | string> {
  let database;
  try {
    database = openDatabase(config, { mustExist: true });
  } catch (error) {
    if (error instanceof DatabaseMissing) return `no database at ${error.where}`;
    const failure = connectionFailureOf(error);
    if (failure !== undefined) return connectionFailureLine(failure);
    throw error;
  }
  try {
    return await schemaState(database);
  } catch (error) {
    const failure = connectionFailureOf(error);
    if (failure !== undefined) return connectionFailureLine(failure);
    return error instanceof Error ? error.message : String(error);
  } finally {
    await database.close();
  }
}

export async function localVersion(): Promise<LocalVersion> {
  const config = loadConfig(cliEnv());
  const schema = await readSchema(config);
  const read = typeof schema === 'string' ? undefined : schema;
  return {
    cmi: cmiReleaseVersion(),
    onapp_version: config.onappVersion,
    node: process.version,
    database: displayDatabaseUrl(config.databaseUrl),
    schema_version: read?.version ?? null,
    schema_latest: read?.latest ?? null,
    migrations_pending: read?.pending ?? null,
    database_problem: typeof schema === 'string' ? schema : read?.version === undefined ? 'cmi never migrated this database (cmi migrate)' : null,
  };
}

function schemaInWords(version: LocalVersion): string {
  if (version.database_problem !== null) return `schema unknown: ${version.database_problem}`;
  const pending = version.migrations_pending ?? [];
  return `schema ${version.schema_version}${pending.length === 0 ? ', up to date' : `, ${pending.length} migration${pending.length === 1 ? '' : 's'} pending (cmi migrate): ${pending.join(', ')}`}`;
}

/** `cmi version --local`, for people or as JSON. */
export function localVersionOutput(version: LocalVersion, json: boolean): Output {
  if (json) return exact(JSON.stringify(version));
  return human(
    `cmi ${version.cmi}`,
    `OnApp version reported ${version.onapp_version} (CMI_ONAPP_VERSION)`,
    `node ${version.node}`,
    `database ${version.database}: ${schemaInWords(version)}`,
  );
}
