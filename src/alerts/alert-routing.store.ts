import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { AlertDestinationsTable, AlertRulesTable, Schema } from '../db/schema.js';
import type { BatchOutcome, InfrastructureError } from '../tracker/infrastructure-error.js';
import { type AlertDestination, type AlertRule, type DestinationFields, type RoutedEvent, type RuleFields, ruleMatches } from './alert-routing.js';
import { type AlertKind, insertDeliveries, pendingDelivery } from './deliveries.store.js';
import { displayUrl } from './sender.js';

function toDestination(row: Selectable<AlertDestinationsTable>): AlertDestination {
  return {
    id: Number(row.id), label: row.label, kind: row.kind, url: row.url, secret: row.secret,
    smtp_host: row.smtp_host, smtp_port: row.smtp_port === null ? null : Number(row.smtp_port), smtp_security: row.smtp_security,
    smtp_user: row.smtp_user, smtp_password: row.smtp_password, from: row.from_address,
    to: row.to_addresses === null || row.to_addresses === '' ? [] : row.to_addresses.split(','),
    enabled: Number(row.enabled) === 1, created_at: new Date(row.created_at), updated_at: new Date(row.updated_at),
  };
}

const destinationColumns = (fields: DestinationFields) => ({
  label: fields.label, kind: fields.kind, url: fields.url, secret: fields.secret, smtp_host: fields.smtp_host, smtp_port: fields.smtp_port,
  smtp_security: fields.smtp_security, smtp_user: fields.smtp_user, smtp_password: fields.smtp_password, from_address: fields.from,
  to_addresses: fields.to.length === 0 ? null : fields.to.join(','), enabled: fields.enabled ? 1 : 0,
});

function toRule(row: Selectable<AlertRulesTable>, destinationIds: number[]): AlertRule {
  return {
    id: Number(row.id), label: row.label, events: row.events.split(' ').filter((e) => e !== '') as RoutedEvent[],
    component: row.component, host: row.host, error_class: row.error_class, error_class_prefix: row.error_class_prefix,
    spike_threshold: row.spike_threshold === null ? null : Number(row.spike_threshold),
    spike_window: row.spike_window === null ? null : Number(row.spike_window),
    cooldown: row.cooldown === null ? null : Number(row.cooldown),
    silent_minutes: row.silent_minutes === null ? null : Number(row.silent_minutes),
    destination_ids: destinationIds, enabled: Number(row.enabled) === 1, created_at: new Date(row.created_at), updated_at: new Date(row.updated_at),
  };
}

const ruleColumns = (fields: RuleFields) => ({
  label: fields.label, events: fields.events.join(' '), component: fields.component, host: fields.host, error_class: fields.error_class,
  error_class_prefix: fields.error_class_prefix, spike_threshold: fields.spike_threshold, spike_window: fields.spike_window,
  cooldown: fields.cooldown, silent_minutes: fields.silent_minutes, enabled: fields.enabled ? 1 : 0,
});

/** Enabled rules, each with its enabled destinations. */
export type ActiveRules = Array<{ rule: AlertRule; destinations: AlertDestination[] }>;

/** The rules a batch is routed by: enabled ones, each with its enabled destinations (read in the batch's transaction). */
export async function activeRules(trx: Kysely<Schema>): Promise<ActiveRules> {
  const rules = await trx.selectFrom('alert_rules').selectAll().where('enabled', '=', 1).orderBy('id').execute();
  if (rules.length === 0) return [];
  const links = await trx.selectFrom('alert_rule_destinations as l')
    .innerJoin('alert_destinations as d', 'd.id', 'l.destination_id')
    .selectAll('d').select('l.rule_id')
    .where('d.enabled', '=', 1)
    .orderBy('l.rule_id').orderBy('d.id')
    .execute();
  return rules.map((row) => {
    const mine = links.filter((link) => Number(link.rule_id) === Number(row.id)).map(toDestination);
    return { rule: toRule(row, mine.map((d) => d.id)), destinations: mine };
  });
}

/**
 * activeRules as a batch reads them, kept in memory while `version` (the alerts' data version,
 * Database.dataVersions.alerts) holds: a change to the rules, the destinations or their links in any
 * process moves it (migration 029; docs/alert-routing.md#rules says when another process sees it).
 * Without a version (PostgreSQL's listening connection down) they are read every time.
 */
export function keptActiveRules(version: () => string | undefined): (trx: Kysely<Schema>) => Promise<ActiveRules> {
  let kept: { version: string; rules: ActiveRules } | undefined;
  return async (trx) => {
    const before = version();
    if (before !== undefined && kept?.version === before) return kept.rules;
    const rules = await activeRules(trx);
    // Kept only when nothing moved the version while they were read.
    kept = before !== undefined && version() === before ? { version: before, rules } : undefined;
    return rules;
  };
}

/** The only SQL of alert destinations and rules (migration 025). */
export function alertRoutingRepository(database: Database) {
  const { db } = database;
  /** A transaction writing the rules or destinations; its end moves the alerts' version again (Database.transactionEnded). */
  const alertsTransaction = <T>(work: (trx: Transaction<Schema>) => Promise<T>): Promise<T> =>
    db.transaction().execute(work).finally(() => database.transactionEnded('alerts'));
  const destinationIdsOf = async (ruleIds: readonly number[]): Promise<Map<number, number[]>> => {
    const out = new Map<number, number[]>(ruleIds.map((id) => [id, []]));
    if (ruleIds.length === 0) return out;
    const rows = await db.selectFrom('alert_rule_destinations').select(['rule_id', 'destination_id'])
      .where('rule_id', 'in', ruleIds).orderBy('rule_id').orderBy('destination_id').execute();
    for (const row of rows) out.get(Number(row.rule_id))?.push(Number(row.destination_id));
    return out;
  };

  return {
    async pageDestinations(limit: number, offset: number): Promise<{ items: AlertDestination[]; total: number }> {
      const { n } = await db.selectFrom('alert_destinations').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await db.selectFrom('alert_destinations').selectAll().orderBy('id').limit(limit).offset(offset).execute();
      return { items: rows.map(toDestination), total: Number(n) };
    },

    async findDestination(id: number): Promise<AlertDestination | undefined> {
      const row = await db.selectFrom('alert_destinations').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toDestination(row);
    },

    /** The destinations with these ids (those that exist). */
    async destinations(ids: readonly number[]): Promise<AlertDestination[]> {
      if (ids.length === 0) return [];
      const rows = await db.selectFrom('alert_destinations').selectAll().where('id', 'in', ids).orderBy('id').execute();
      return rows.map(toDestination);
    },

    async createDestination(fields: DestinationFields, now: Date): Promise<AlertDestination> {
      const at = now.toISOString();
      const row = await db.insertInto('alert_destinations').values({ ...destinationColumns(fields), created_at: at, updated_at: at }).returningAll().executeTakeFirstOrThrow();
      return toDestination(row);
    },

    async updateDestination(id: number, fields: DestinationFields, now: Date): Promise<boolean> {
      const result = await db.updateTable('alert_destinations').set({ ...destinationColumns(fields), updated_at: now.toISOString() }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /**
     * Deletes a destination, its place in every rule, and fails what is still pending to it (the
     * list keeps the deliveries made). A rule left without a destination is disabled.
     */
    async removeDestination(id: number, now: Date): Promise<boolean> {
      return alertsTransaction(async (trx) => {
        const ruleIds = (await trx.selectFrom('alert_rule_destinations').select('rule_id').where('destination_id', '=', id).execute()).map((r) => Number(r.rule_id));
        await trx.deleteFrom('alert_rule_destinations').where('destination_id', '=', id).execute();
        if (ruleIds.length > 0) {
          await trx.updateTable('alert_rules').set({ enabled: 0, updated_at: now.toISOString() })
            .where('id', 'in', ruleIds)
            .where((eb) => eb.not(eb.exists(eb.selectFrom('alert_rule_destinations as l').select('l.rule_id').whereRef('l.rule_id', '=', 'alert_rules.id'))))
            .execute();
        }
        await trx.updateTable('webhook_deliveries').set({ state: 'failed', last_error: 'destination deleted', lease_owner: null, lease_until: null })
          .where('destination_id', '=', id).where('state', '=', 'pending').execute();
        const result = await trx.deleteFrom('alert_destinations').where('id', '=', id).executeTakeFirst();
        return Number(result.numDeletedRows) > 0;
      });
    },

    async pageRules(limit: number, offset: number): Promise<{ items: AlertRule[]; total: number }> {
      const { n } = await db.selectFrom('alert_rules').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await db.selectFrom('alert_rules').selectAll().orderBy('id').limit(limit).offset(offset).execute();
      const ids = await destinationIdsOf(rows.map((row) => Number(row.id)));
      return { items: rows.map((row) => toRule(row, ids.get(Number(row.id)) ?? [])), total: Number(n) };
    },

    async findRule(id: number): Promise<AlertRule | undefined> {
      const row = await db.selectFrom('alert_rules').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      return toRule(row, (await destinationIdsOf([id])).get(id) ?? []);
    },

    /** Which of `ids` name no destination. */
    async missingDestinations(ids: readonly number[]): Promise<number[]> {
      const found = new Set((await this.destinations(ids)).map((d) => d.id));
      return ids.filter((id) => !found.has(id));
    },

    async createRule(fields: RuleFields, now: Date): Promise<AlertRule> {
      const at = now.toISOString();
      return alertsTransaction(async (trx) => {
        const row = await trx.insertInto('alert_rules').values({ ...ruleColumns(fields), created_at: at, updated_at: at }).returningAll().executeTakeFirstOrThrow();
        await trx.insertInto('alert_rule_destinations').values(fields.destination_ids.map((destination_id) => ({ rule_id: Number(row.id), destination_id }))).execute();
        return toRule(row, [...fields.destination_ids]);
      });
    },

    async updateRule(id: number, fields: RuleFields, now: Date): Promise<boolean> {
      return alertsTransaction(async (trx) => {
        const result = await trx.updateTable('alert_rules').set({ ...ruleColumns(fields), updated_at: now.toISOString() }).where('id', '=', id).executeTakeFirst();
        if (Number(result.numUpdatedRows) === 0) return false;
        await trx.deleteFrom('alert_rule_destinations').where('rule_id', '=', id).execute();
        await trx.insertInto('alert_rule_destinations').values(fields.destination_ids.map((destination_id) => ({ rule_id: id, destination_id }))).execute();
        // A rule's spike windows and silences start again under its new settings.
        await trx.deleteFrom('alert_rule_windows').where('rule_id', '=', id).execute();
        await trx.deleteFrom('log_source_silences').where('rule_id', '=', id).execute();
        return true;
      });
    },

    async removeRule(id: number): Promise<boolean> {
      return alertsTransaction(async (trx) => {
        await trx.deleteFrom('alert_rule_destinations').where('rule_id', '=', id).execute();
        await trx.deleteFrom('alert_rule_windows').where('rule_id', '=', id).execute();
        await trx.deleteFrom('log_source_silences').where('rule_id', '=', id).execute();
        const result = await trx.deleteFrom('alert_rules').where('id', '=', id).executeTakeFirst();
        return Number(result.numDeletedRows) > 0;
      });
    },

    /** Queues deliveries outside a batch (a report's routed alerts). */
    async queue(rows: ReadonlyArray<ReturnType<typeof pendingDelivery>>): Promise<void> {
      await insertDeliveries(db, rows);
    },

    /** The rules that route `report` events, with their enabled destinations, and the error's hosts and components seen. */
    async reportRouting(errorId: number): Promise<{ rules: Awaited<ReturnType<typeof activeRules>>; hosts: string[]; components: string[] }> {
      const rules = (await activeRules(db)).filter(({ rule }) => rule.events.includes('report'));
      if (rules.length === 0) return { rules, hosts: [], components: [] };
      const seen = await db.selectFrom('error_breakdown').select(['dimension', 'value']).where('error_id', '=', errorId).execute();
      return {
        rules,
        hosts: seen.filter((s) => s.dimension === 'host' && s.value !== '').map((s) => s.value),
        components: seen.filter((s) => s.dimension === 'component' && s.value !== '').map((s) => s.value),
      };
    },
  };
}

export type AlertRoutingRepository = ReturnType<typeof alertRoutingRepository>;

/** What a batch's routed alerts need beyond the rules (alerts/planner.ts). */
export interface RoutingPlan {
  now: Date;
  /** A rule's spike settings where it gives none: CMI_ALERT_SPIKE_THRESHOLD, _WINDOW, CMI_ALERT_COOLDOWN. */
  spikeThreshold: number;
  spikeWindowSeconds: number;
  cooldownSeconds: number;
  body(destination: AlertDestination, event: AlertKind, record: InfrastructureError, detail: Record<string, unknown>): string;
  newDeliveryId(): string;
  /** The enabled rules, as kept in memory (keptActiveRules); read in the transaction when not given. */
  rules?: (trx: Kysely<Schema>) => Promise<ActiveRules>;
}

const EVENT_ORDER: Record<AlertKind, number> = { new: 0, regression: 1, spike: 2 };

/**
 * Inside the transaction that counted a batch (docs/alert-routing.md#rules): each enabled rule whose
 * conditions the error meets queues its events to its enabled destinations, `new` for a new error,
 * `regression` for one the batch reopened, `spike` when the batch takes the rule's window for the
 * error past its threshold (out of its cooldown; never for an ignored or snoozed error). An event
 * goes once to a destination however many rules send it there.
 */
export async function enqueueRoutedAlerts(trx: Kysely<Schema>, outcomes: readonly BatchOutcome[], plan: RoutingPlan): Promise<number> {
  const routes = (await (plan.rules ?? activeRules)(trx)).filter(({ destinations }) => destinations.length > 0);
  if (routes.length === 0) return 0;
  const now = plan.now.toISOString();
  const queued = new Map<string, { event: AlertKind; record: InfrastructureError; detail: Record<string, unknown>; destination: AlertDestination }>();
  const add = (event: AlertKind, record: InfrastructureError, destinations: readonly AlertDestination[], detail: Record<string, unknown> = {}) => {
    for (const destination of destinations) {
      const key = `${record.id}:${event}:${destination.id}`;
      if (!queued.has(key)) queued.set(key, { event, record, detail, destination });
    }
  };
  for (const { rule, destinations } of routes) {
    const matching = outcomes.filter((o) => ruleMatches(rule, { error_class: o.record.error_class, hosts: o.hosts, components: o.components }));
    if (matching.length === 0) continue;
    if (rule.events.includes('new')) for (const o of matching) if (o.created) add('new', o.record, destinations);
    if (rule.events.includes('regression')) for (const o of matching) if (o.triage.regressed) add('regression', o.record, destinations);
    if (!rule.events.includes('spike')) continue;
    const threshold = rule.spike_threshold ?? plan.spikeThreshold;
    const windowSeconds = rule.spike_window ?? plan.spikeWindowSeconds;
    const windowStart = new Date(plan.now.getTime() - windowSeconds * 1000).toISOString();
    const cooledBefore = new Date(plan.now.getTime() - (rule.cooldown ?? plan.cooldownSeconds) * 1000).toISOString();
    const byId = new Map(matching.map((o) => [o.record.id, o]));
    for (let i = 0; i < matching.length; i += 500) {
      const windows = await trx.insertInto('alert_rule_windows')
        .values(matching.slice(i, i + 500).map((o) => ({ rule_id: rule.id, error_id: o.record.id, window_started_at: now, window_count: o.added, spike_alerted_at: null })))
        .onConflict((oc) => oc.columns(['rule_id', 'error_id']).doUpdateSet((eb) => ({
          window_count: eb.case().when('alert_rule_windows.window_started_at', '>', windowStart)
            .then(eb('alert_rule_windows.window_count', '+', eb.ref('excluded.window_count')))
            .else(eb.ref('excluded.window_count')).end(),
          window_started_at: eb.case().when('alert_rule_windows.window_started_at', '>', windowStart)
            .then(eb.ref('alert_rule_windows.window_started_at'))
            .else(eb.ref('excluded.window_started_at')).end(),
        })))
        .returning(['error_id', 'window_count', 'spike_alerted_at'])
        .execute();
      for (const row of windows) {
        const o = byId.get(Number(row.error_id)) as BatchOutcome;
        if (o.triage.status === 'ignored' || o.triage.status === 'snoozed') continue;
        const count = Number(row.window_count);
        const crossed = count > threshold && count - o.added <= threshold;
        if (!crossed || (row.spike_alerted_at !== null && row.spike_alerted_at > cooledBefore)) continue;
        await trx.updateTable('alert_rule_windows').set({ spike_alerted_at: now }).where('rule_id', '=', rule.id).where('error_id', '=', o.record.id).execute();
        add('spike', o.record, destinations, { spike: { occurrences: count, window_seconds: windowSeconds, threshold } });
      }
    }
  }
  const rows = [...queued.values()].sort((a, b) => a.record.id - b.record.id || EVENT_ORDER[a.event] - EVENT_ORDER[b.event] || a.destination.id - b.destination.id);
  await insertDeliveries(trx, rows.map((r) => pendingDelivery({
    delivery_id: plan.newDeliveryId(), kind: r.event, error_id: r.record.id, url: deliveryTarget(r.destination),
    body: plan.body(r.destination, r.event, r.record, r.detail), destination_id: r.destination.id,
  }, now)));
  return rows.length;
}

/**
 * What a delivery's `url` column records of its destination: its URL's origin (its path may be its
 * secret, and the outbox sends to the destination's URL, never this), or mail's `smtp://host:port`.
 */
export const deliveryTarget = (destination: Pick<AlertDestination, 'kind' | 'url' | 'smtp_host' | 'smtp_port' | 'smtp_security'>): string =>
  destination.kind === 'email'
    ? `${destination.smtp_security === 'tls' ? 'smtps' : 'smtp'}://${destination.smtp_host ?? ''}:${destination.smtp_port ?? 25}/`
    : destination.url === null ? '' : displayUrl(destination.url);
