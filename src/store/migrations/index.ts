import type { Migration } from 'kysely';
import type { DialectName } from '../dialect.js';
import { initialMigration } from './001_initial.js';

/** Every migration, in order. Names are permanent: never rename or edit a shipped one, add a new one. */
export function allMigrations(dialect: DialectName): Record<string, Migration> {
  return {
    '001_initial': initialMigration(dialect),
  };
}
