import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/**
 * Operator rules for the log sources (docs/log-sources.md#operator-rules): a record whose program and
 * message match a rule's globs is an error of the rule's class (and component), whatever its severity,
 * before the shipped rules are tried. The log sources read them with their keys, so a change moves the
 * credentials version like a change to a key (migration 022): every process applies it to the next
 * record.
 */
export function logRulesMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.tables.addIdColumn(db.schema.createTable('log_rules'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('label', 'varchar(255)', (c) => c.notNull())
        .addColumn('program', 'varchar(255)')
        .addColumn('pattern', 'varchar(1024)', (c) => c.notNull())
        .addColumn('error_class', 'varchar(255)', (c) => c.notNull())
        .addColumn('component', 'varchar(255)')
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await dialect.changeNotifications.addCredentialChanges(db, ['log_rules']);
    },
  };
}
