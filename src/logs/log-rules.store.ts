import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { PerDatabase } from '../db/dialects/dialect.js';
import type { LogRulesTable, Schema } from '../db/schema.js';
import type { LogRule, LogRuleFields } from './log-rule.js';

function toRule(row: Selectable<LogRulesTable>): LogRule {
  return {
    id: Number(row.id), position: Number(row.position), label: row.label, program: row.program, pattern: row.pattern,
    error_class: row.error_class, component: row.component, enabled: Number(row.enabled) === 1,
    created_at: new Date(row.created_at), updated_at: new Date(row.updated_at),
  };
}

const toColumns = (fields: Partial<LogRuleFields>) => ({
  ...(fields.position !== undefined ? { position: fields.position } : {}),
  ...(fields.label !== undefined ? { label: fields.label } : {}),
  ...(fields.program !== undefined ? { program: fields.program } : {}),
  ...(fields.pattern !== undefined ? { pattern: fields.pattern } : {}),
  ...(fields.error_class !== undefined ? { error_class: fields.error_class } : {}),
  ...(fields.component !== undefined ? { component: fields.component } : {}),
  ...(fields.enabled !== undefined ? { enabled: fields.enabled ? 1 : 0 } : {}),
});

/** An arbitrary, fixed advisory-lock key for adding a rule under the limit. */
const RULES_LOCK = 7_302_141;

/** Inside a transaction: waits until no other transaction is adding a rule (SQLite: one writer at a time already). */
const serializeRuleCreation: PerDatabase<(trx: Kysely<Schema>) => Promise<void>> = {
  sqlite: async () => {},
  postgres: async (trx) => {
    await sql`select pg_advisory_xact_lock(${RULES_LOCK})`.execute(trx);
  },
};

/** Thrown inside a transaction to undo it: there were as many rules as may be. */
class LimitReached extends Error {}

/** The only SQL of log_rules (migration 041). */
export function logRulesRepository({ db, dialect }: Database) {
  const ordered = () => db.selectFrom('log_rules').selectAll().orderBy('position').orderBy('id');
  return {
    async page(limit: number, offset: number): Promise<{ items: LogRule[]; total: number }> {
      const { n } = await db.selectFrom('log_rules').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await ordered().limit(limit).offset(offset).execute();
      return { items: rows.map(toRule), total: Number(n) };
    },

    /** Every rule, in the order they are tried (they are few: MAX_LOG_RULES). */
    async all(): Promise<LogRule[]> {
      return (await ordered().execute()).map(toRule);
    },

    async find(id: number): Promise<LogRule | undefined> {
      const row = await db.selectFrom('log_rules').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRule(row);
    },

    /** A new rule, without a position after the last one; undefined when there are `max` rules already (counted under a lock). */
    async create(fields: Omit<LogRuleFields, 'position'> & { position: number | undefined }, now: Date, max: number): Promise<LogRule | undefined> {
      const at = now.toISOString();
      try {
        return await db.transaction().execute(async (trx) => {
          await dialect.choose(serializeRuleCreation)(trx);
          const position = fields.position ?? Number((await trx.selectFrom('log_rules').select((eb) => eb.fn.max('position').as('last')).executeTakeFirst())?.last ?? 0) + 1;
          // The insert first, so SQLite holds the write lock while it counts.
          const row = await trx.insertInto('log_rules')
            .values({ ...toColumns(fields), position, label: fields.label, pattern: fields.pattern, error_class: fields.error_class, enabled: fields.enabled ? 1 : 0, created_at: at, updated_at: at })
            .returningAll().executeTakeFirstOrThrow();
          const { n } = await trx.selectFrom('log_rules').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
          if (Number(n) > max) throw new LimitReached();
          return toRule(row);
        });
      } catch (error) {
        if (error instanceof LimitReached) return undefined;
        throw error;
      }
    },

    async update(id: number, fields: Partial<LogRuleFields>, now: Date): Promise<LogRule | undefined> {
      const row = await db.updateTable('log_rules').set({ ...toColumns(fields), updated_at: now.toISOString() }).where('id', '=', id).returningAll().executeTakeFirst();
      return row && toRule(row);
    },

    async remove(id: number): Promise<boolean> {
      const result = await db.deleteFrom('log_rules').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

export type LogRulesRepository = ReturnType<typeof logRulesRepository>;
