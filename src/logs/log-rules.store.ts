import type { Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import type { LogRulesTable } from '../db/schema.js';
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

/** The only SQL of log_rules (migration 041). */
export function logRulesRepository({ db }: Database) {
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

    async count(): Promise<number> {
      const { n } = await db.selectFrom('log_rules').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      return Number(n);
    },

    async find(id: number): Promise<LogRule | undefined> {
      const row = await db.selectFrom('log_rules').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRule(row);
    },

    /** A new rule; without a position, after the last one. */
    async create(fields: Omit<LogRuleFields, 'position'> & { position: number | undefined }, now: Date): Promise<LogRule> {
      const at = now.toISOString();
      const position = fields.position ?? Number((await db.selectFrom('log_rules').select((eb) => eb.fn.max('position').as('last')).executeTakeFirst())?.last ?? 0) + 1;
      const row = await db.insertInto('log_rules')
        .values({ ...toColumns(fields), position, label: fields.label, pattern: fields.pattern, error_class: fields.error_class, enabled: fields.enabled ? 1 : 0, created_at: at, updated_at: at })
        .returningAll().executeTakeFirstOrThrow();
      return toRule(row);
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
