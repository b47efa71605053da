import type { Catalog } from './catalog/catalog.js';
import { postgresCatalog } from './catalog/postgres.js';
import { sqliteCatalog } from './catalog/sqlite.js';
import type { ChangeNotifications } from './change-notifications/change-notifications.js';
import { postgresChangeNotifications } from './change-notifications/postgres.js';
import { sqliteChangeNotifications } from './change-notifications/sqlite.js';
import type { Connector } from './connection/connection.js';
import { postgresConnector } from './connection/postgres.js';
import { sqliteConnector } from './connection/sqlite.js';
import type { Constraints } from './constraints/constraints.js';
import { postgresConstraints } from './constraints/postgres.js';
import { sqliteConstraints } from './constraints/sqlite.js';
import type { Migrations } from './migrations/migrations.js';
import { postgresMigrations } from './migrations/postgres.js';
import { sqliteMigrations } from './migrations/sqlite.js';
import { postgresStatistics } from './statistics/postgres.js';
import { sqliteStatistics } from './statistics/sqlite.js';
import type { PlannerStatistics } from './statistics/statistics.js';
import { postgresTables } from './tables/postgres.js';
import { sqliteTables } from './tables/sqlite.js';
import type { Tables } from './tables/tables.js';
import { postgresText } from './text/postgres.js';
import { sqliteText } from './text/sqlite.js';
import type { TextFunctions } from './text/text.js';

export type DialectName = 'sqlite' | 'postgres';

/**
 * One value for each database, such as a feature's SQL where the two differ; `Dialect.choose` takes
 * this database's. The feature states both, the db layer picks: nothing else asks which database it is on.
 */
export type PerDatabase<T> = Readonly<Record<DialectName, T>>;

/**
 * What differs between SQLite and PostgreSQL, one concern per folder (an interface, sqlite.ts and
 * postgres.ts), each concern's implementation chosen once for the database DATABASE_URL names
 * (database-url.ts, then dialectOf below). A dialect knows the databases, not the features: a
 * feature's SQL that differs between them stays with the feature, which states both and takes this
 * database's with `choose`. docs/architecture.md explains each part.
 */
export interface Dialect {
  readonly name: DialectName;
  /** The file path (SQLite) or the connection URL (PostgreSQL) this dialect opens. */
  readonly target: string;
  /** This database's variant of `variants`. */
  choose<T>(variants: PerDatabase<T>): T;
  /** Opening the database: its connections, pragmas or pool, and its data versions. */
  readonly connection: Connector;
  /** What migrations create so that other processes learn of changes to cached data. */
  readonly changeNotifications: ChangeNotifications;
  /** Running migrations: where their bookkeeping lives, and running one atomically. */
  readonly migrations: Migrations;
  /** Table definitions: id columns, tables stored in key order. */
  readonly tables: Tables;
  /** Reading constraint errors: the column a unique violation names. */
  readonly constraints: Constraints;
  /** Comparing text: the lower() that folds every letter. */
  readonly text: TextFunctions;
  /** The query planner's statistics, refreshed after a bulk load. */
  readonly statistics: PlannerStatistics;
  /** The tables as a whole: listing, one consistent read, dropping, ids (backups). */
  readonly catalog: Catalog;
}

/** Each concern's implementation on each database. */
const CONNECTORS: PerDatabase<(target: string) => Connector> = { sqlite: sqliteConnector, postgres: postgresConnector };
const CHANGE_NOTIFICATIONS: PerDatabase<ChangeNotifications> = { sqlite: sqliteChangeNotifications, postgres: postgresChangeNotifications };
const MIGRATIONS: PerDatabase<Migrations> = { sqlite: sqliteMigrations, postgres: postgresMigrations };
const TABLES: PerDatabase<Tables> = { sqlite: sqliteTables, postgres: postgresTables };
const CONSTRAINTS: PerDatabase<Constraints> = { sqlite: sqliteConstraints, postgres: postgresConstraints };
const TEXT: PerDatabase<TextFunctions> = { sqlite: sqliteText, postgres: postgresText };
const STATISTICS: PerDatabase<PlannerStatistics> = { sqlite: sqliteStatistics, postgres: postgresStatistics };
const CATALOG: PerDatabase<Catalog> = { sqlite: sqliteCatalog, postgres: postgresCatalog };

/** The dialect of the database `name` at `target`: every concern's implementation for it, chosen here, once. */
function dialectOf(name: DialectName, target: string): Dialect {
  const choose = <T>(variants: PerDatabase<T>): T => variants[name];
  const statistics = choose(STATISTICS);
  return {
    name,
    target,
    choose,
    connection: choose(CONNECTORS)(target),
    changeNotifications: choose(CHANGE_NOTIFICATIONS),
    migrations: choose(MIGRATIONS),
    tables: choose(TABLES),
    constraints: choose(CONSTRAINTS),
    text: choose(TEXT),
    statistics,
    catalog: choose(CATALOG),
  };
}

/** SQLite, embedded, in the file at `path`. */
export const sqliteDialect = (path: string): Dialect => dialectOf('sqlite', path);

/** PostgreSQL at `url`. */
export const postgresDialect = (url: string): Dialect => dialectOf('postgres', url);
