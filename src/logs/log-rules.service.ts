import type { AuditRecorder } from '../audit/audit-trail.js';
import { changedFields, fieldsOf } from '../audit/audit-event.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { FieldErrors, NotFound, Unprocessable } from '../shared/problems.js';
import { flagOf, type Fields, stringField, unwrapRecord } from '../shared/request-body.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { PromotionRule } from './log-errors.js';
import { type LogRule, type LogRuleFields, promotionRulesOf } from './log-rule.js';
import type { LogRulesRepository } from './log-rules.store.js';

/** Most operator rules (docs/limits.md#log-sources): every record may be tried against each. */
export const MAX_LOG_RULES = 200;
/** Longest glob of a rule's program and message. */
const MAX_GLOB_CHARS = 1024;
const MAX_POSITION = 100_000;

/** A nullable text field: absent (undefined), cleared (null, or blank), or a string within `max`. */
function nullableText(fields: Fields, name: string, errors: FieldErrors, max: number): string | null | undefined {
  const value = fields[name];
  if (value === null || (typeof value === 'string' && value.trim() === '')) return null;
  return stringField(fields, name, errors, { required: false, max });
}

/** Reads the rule's fields present in the body (wrapped in `log_rule` or not), naming every bad one in one 422. */
function readRuleFields(body: unknown, required: boolean): Partial<LogRuleFields> {
  const fields = unwrapRecord(body ?? {}, 'log_rule');
  const errors = new FieldErrors();
  const out: Partial<LogRuleFields> = {};
  // On a change too, a field given may not be blank.
  const given = (name: string) => required || fields[name] !== undefined;
  const label = stringField(fields, 'label', errors, { required: given('label'), max: 255 });
  if (label !== undefined) out.label = label;
  const pattern = stringField(fields, 'pattern', errors, { required: given('pattern'), max: MAX_GLOB_CHARS });
  if (pattern !== undefined) out.pattern = pattern;
  const errorClass = stringField(fields, 'error_class', errors, { required: given('error_class'), max: 255 });
  if (errorClass !== undefined) out.error_class = errorClass;
  const program = nullableText(fields, 'program', errors, MAX_GLOB_CHARS);
  if (program !== undefined) out.program = program;
  const component = nullableText(fields, 'component', errors, 255);
  if (component !== undefined) out.component = component;
  const position = fields['position'];
  if (position !== undefined && position !== null) {
    const number = typeof position === 'number' ? position : typeof position === 'string' && /^\d{1,6}$/.test(position.trim()) ? Number(position) : NaN;
    if (!Number.isInteger(number) || number < 1 || number > MAX_POSITION) errors.add('position', `must be an integer from 1 to ${MAX_POSITION}`);
    else out.position = number;
  }
  const enabled = fields['enabled'];
  if (enabled !== undefined && enabled !== null) {
    const flag = flagOf(enabled);
    if (flag === undefined) errors.add('enabled', 'must be true or false');
    else out.enabled = flag;
  }
  errors.throwIfAny();
  return out;
}

export interface RuleChanges {
  /** The credentials version (migration 041 moves it with every change to a rule, in any process). */
  version: () => string | undefined;
  heard: () => Promise<void> | undefined;
}

/**
 * The log sources' operator rules (docs/log-sources.md#operator-rules): holders of the ingest keys'
 * permissions read and change them (they decide what the keys' records become); the log sources read
 * them as promotion rules, from memory while no rule changed anywhere.
 */
export function logRulesService(repository: LogRulesRepository, clock: Clock, audit: AuditRecorder, others: RuleChanges) {
  const recordRule = (actor: Actor, action: string, id: number, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'log_rule', target_id: id, changes });

  // The rules as promotion rules, with the credentials version they were read under; `generation`
  // moves with this process's own changes, so a read begun before one is not kept.
  let kept: { version: string; generation: number; rules: Promise<PromotionRule[]> } | undefined;
  let generation = 0;
  const changed = () => {
    generation += 1;
    kept = undefined;
  };

  async function find(actor: Actor, id: number): Promise<LogRule> {
    assertPermitted(actor, 'ingest_keys.read');
    const rule = await repository.find(id);
    if (!rule) throw new NotFound();
    return rule;
  }

  return {
    async list(actor: Actor, limit: number, offset: number): Promise<Page<LogRule>> {
      assertPermitted(actor, 'ingest_keys.read');
      return repository.page(limit, offset);
    },

    get: find,

    async create(actor: Actor, body: unknown): Promise<LogRule> {
      assertPermitted(actor, 'ingest_keys.create');
      const fields = readRuleFields(body, true);
      const rule = await repository.create({
        position: fields.position, label: fields.label as string, program: fields.program ?? null, pattern: fields.pattern as string,
        error_class: fields.error_class as string, component: fields.component ?? null, enabled: fields.enabled ?? true,
      }, clock(), MAX_LOG_RULES);
      if (rule === undefined) throw new Unprocessable({ base: [`There are already ${MAX_LOG_RULES} log rules, the most cmi keeps`] });
      changed();
      await recordRule(actor, 'log_rule.create', rule.id, fieldsOf(rule));
      return rule;
    },

    async update(actor: Actor, id: number, body: unknown): Promise<void> {
      assertPermitted(actor, 'ingest_keys.update');
      const fields = readRuleFields(body, false);
      const before = await repository.find(id);
      const after = await repository.update(id, fields, clock());
      changed();
      if (!before || !after) throw new NotFound();
      await recordRule(actor, 'log_rule.update', id, changedFields(before, after));
    },

    async remove(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'ingest_keys.delete');
      const before = await repository.find(id);
      const found = await repository.remove(id);
      changed();
      if (!found || !before) throw new NotFound();
      await recordRule(actor, 'log_rule.delete', id, { label: before.label });
    },

    /** The enabled rules as the log sources try them (log-errors.ts verdictOf), before the shipped ones. */
    async promotionRules(): Promise<PromotionRule[]> {
      const heard = others.heard();
      if (heard !== undefined) await heard;
      const version = others.version();
      if (version !== undefined && kept !== undefined && kept.version === version && kept.generation === generation) return kept.rules;
      const rules = repository.all().then(promotionRulesOf);
      if (version !== undefined) {
        const entry = { version, generation, rules };
        kept = entry;
        rules.catch(() => {
          if (kept === entry) kept = undefined;
        });
      }
      return rules;
    },
  };
}

export type LogRulesService = ReturnType<typeof logRulesService>;
