import { type Kysely, type Selectable, sql } from 'kysely';
import type { BatchOutcome, InfrastructureError } from '../tracker/infrastructure-error.js';
import type { Database } from '../db/database.js';
import type { Schema, WebhookDeliveriesTable } from '../db/schema.js';

export type DeliveryKind = WebhookDeliveriesTable['kind'];
export type DeliveryState = WebhookDeliveriesTable['state'];
export type AlertKind = Exclude<DeliveryKind, 'report' | 'test' | 'silent' | 'back'>;
/** The alerts about a log source rather than an error (docs/alert-routing.md#silent-sources). */
export type SourceAlertKind = 'silent' | 'back';

/** A delivery as the outbox keeps it (docs/reporting-and-alerts.md#the-outbox). */
export interface Delivery {
  id: number;
  delivery_id: string;
  kind: DeliveryKind;
  error_id: number;
  url: string;
  body: string;
  state: DeliveryState;
  attempts: number;
  last_status: number | null;
  created_at: Date;
  next_attempt_at: Date;
  delivered_at: Date | null;
  /** Its destination (docs/alert-routing.md); null: the built-in one of CMI_ALERT_WEBHOOK_URL, or a report's URL. */
  destination_id: number | null;
  /** Why the last try failed, in a few words. */
  last_error: string | null;
  /** The id of the message that carried it: its own delivery_id, or a digest's. */
  sent_as: string | null;
}

/** What a batch of reports asks of the alerts, decided by the domain (alerts/planner.ts). */
export interface AlertPlan {
  url: string;
  now: Date;
  /** A spike: more than this many occurrences within `spikeWindowMs`. */
  spikeThreshold: number;
  spikeWindowMs: number;
  /** No second spike alert for an error within this long of the last. */
  cooldownMs: number;
  /** The JSON body of an alert of `kind` about `record` (`windowCount`: occurrences in the spike window). */
  body(kind: AlertKind, record: InfrastructureError, windowCount: number): string;
  newDeliveryId(): string;
}

const ROWS_PER_STATEMENT = 500;

function toDelivery(row: Selectable<WebhookDeliveriesTable>): Delivery {
  return {
    id: Number(row.id),
    delivery_id: row.delivery_id,
    kind: row.kind,
    // A source's alert is kept under minus its source's id, so that its silent and back go in order (migration 040); served as 0, like a test.
    error_id: Math.max(0, Number(row.error_id)),
    url: row.url,
    body: row.body,
    state: row.state,
    attempts: Number(row.attempts),
    last_status: row.last_status === null ? null : Number(row.last_status),
    created_at: new Date(row.created_at),
    next_attempt_at: new Date(row.next_attempt_at),
    delivered_at: row.delivered_at === null ? null : new Date(row.delivered_at),
    destination_id: row.destination_id === null ? null : Number(row.destination_id),
    last_error: row.last_error,
    sent_as: row.sent_as,
  };
}

/** A new pending delivery, due now, as `enqueueAlerts` and the routing queue it. */
export const pendingDelivery = (d: { delivery_id: string; kind: DeliveryKind; error_id: number; url: string; body: string; destination_id: number | null }, now: string) => ({
  ...d,
  state: 'pending' as const,
  attempts: 0,
  last_status: null,
  created_at: now,
  next_attempt_at: now,
  delivered_at: null,
  lease_owner: null,
  lease_until: null,
  last_error: null,
  sent_as: null,
});

/** Inserts deliveries, 500 rows a statement. */
export async function insertDeliveries(trx: Kysely<Schema>, rows: ReadonlyArray<ReturnType<typeof pendingDelivery>>): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) await trx.insertInto('webhook_deliveries').values(rows.slice(i, i + ROWS_PER_STATEMENT)).execute();
}

/**
 * Inside the transaction that counted a batch of reports: the alerts it causes go into the outbox
 * with it, so an alert exists exactly when its cause was committed (docs/reporting-and-alerts.md#alerts).
 * A new error gets a `new` alert. Each error's spike window (`error_alerts`) adds the batch's count,
 * restarting when it is older than the window; the batch that takes it past the threshold sends a
 * `spike` alert unless the last one is within the cooldown, or the error is ignored or snoozed (its
 * occurrences still count). An error the batch reopened (it was resolved: tracker/triage-batch.ts)
 * gets a `regression` alert, once, as the batch that reopened it is the only one. Rows are upserted in the batch's order
 * (by fingerprint), so concurrent transactions on PostgreSQL lock them in the same order.
 */
export async function enqueueAlerts(trx: Kysely<Schema>, outcomes: readonly BatchOutcome[], plan: AlertPlan): Promise<number> {
  const now = plan.now.toISOString();
  const windowStart = new Date(plan.now.getTime() - plan.spikeWindowMs).toISOString();
  const cooledBefore = new Date(plan.now.getTime() - plan.cooldownMs).toISOString();
  const byId = new Map(outcomes.map((outcome) => [outcome.record.id, outcome]));
  const deliveries: Array<{ kind: AlertKind; record: InfrastructureError; windowCount: number }> = [];
  for (const outcome of outcomes) if (outcome.created) deliveries.push({ kind: 'new', record: outcome.record, windowCount: outcome.added });
  for (const outcome of outcomes) if (outcome.triage.regressed) deliveries.push({ kind: 'regression', record: outcome.record, windowCount: outcome.added });

  for (let i = 0; i < outcomes.length; i += ROWS_PER_STATEMENT) {
    const part = outcomes.slice(i, i + ROWS_PER_STATEMENT);
    const windows = await trx.insertInto('error_alerts')
      .values(part.map((outcome) => ({ error_id: outcome.record.id, window_started_at: now, window_count: outcome.added, spike_alerted_at: null })))
      .onConflict((oc) => oc.column('error_id').doUpdateSet((eb) => ({
        window_count: eb.case().when('error_alerts.window_started_at', '>', windowStart)
          .then(eb('error_alerts.window_count', '+', eb.ref('excluded.window_count')))
          .else(eb.ref('excluded.window_count')).end(),
        window_started_at: eb.case().when('error_alerts.window_started_at', '>', windowStart)
          .then(eb.ref('error_alerts.window_started_at'))
          .else(eb.ref('excluded.window_started_at')).end(),
      })))
      .returning(['error_id', 'window_count', 'spike_alerted_at'])
      .execute();
    for (const row of windows) {
      const outcome = byId.get(Number(row.error_id)) as BatchOutcome;
      // Ignored and snoozed errors are counted, never alerted (docs/reporting-and-alerts.md#alerts).
      if (outcome.triage.status === 'ignored' || outcome.triage.status === 'snoozed') continue;
      const count = Number(row.window_count);
      const crossed = count > plan.spikeThreshold && count - outcome.added <= plan.spikeThreshold;
      if (!crossed || (row.spike_alerted_at !== null && row.spike_alerted_at > cooledBefore)) continue;
      await trx.updateTable('error_alerts').set({ spike_alerted_at: now }).where('error_id', '=', outcome.record.id).execute();
      deliveries.push({ kind: 'spike', record: outcome.record, windowCount: count });
    }
  }

  // In order per error: its `new` or `regression` before its `spike`.
  const order: Record<AlertKind, number> = { new: 0, regression: 1, spike: 2 };
  deliveries.sort((a, b) => a.record.id - b.record.id || order[a.kind] - order[b.kind]);
  await insertDeliveries(trx, deliveries.map((d) => pendingDelivery({
    delivery_id: plan.newDeliveryId(), kind: d.kind, error_id: d.record.id, url: plan.url, body: plan.body(d.kind, d.record, d.windowCount), destination_id: null,
  }, now)));
  return deliveries.length;
}

/** The outbox of reports and alerts (migration 010): the only SQL of webhook deliveries. */
export function webhookDeliveriesRepository(database: Database) {
  const { db } = database;
  const owned = (id: number, token: string) =>
    db.updateTable('webhook_deliveries').where('id', '=', id).where('lease_owner', '=', token).where('state', '=', 'pending');

  return {
    /** Deliveries still to be sent (or retried): the outbox's backlog, for the metrics (docs/operations.md#metrics). */
    async countPending(): Promise<number> {
      const row = await db.selectFrom('webhook_deliveries').where('state', '=', 'pending').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
      return Number(row.count);
    },

    /** Records a delivery made at once (a report), in its final state. */
    async insertFinished(delivery: Omit<Delivery, 'id' | 'next_attempt_at' | 'destination_id' | 'last_error' | 'sent_as'> & Partial<Pick<Delivery, 'destination_id' | 'last_error'>>): Promise<Delivery> {
      const row = await db.insertInto('webhook_deliveries').values({
        destination_id: null,
        last_error: null,
        ...delivery,
        sent_as: delivery.state === 'delivered' ? delivery.delivery_id : null,
        created_at: delivery.created_at.toISOString(),
        next_attempt_at: delivery.created_at.toISOString(),
        delivered_at: delivery.delivered_at?.toISOString() ?? null,
        lease_owner: null,
        lease_until: null,
      }).returningAll().executeTakeFirstOrThrow();
      return toDelivery(row);
    },

    /**
     * Claims up to `limit` deliveries due at `now` for `token` until `until`: the oldest pending one
     * of each error for each destination (so each error's deliveries to one place go in order), not
     * held by another claim; the built-in destination's only in `kinds` (those this process has a URL
     * for), every routed one. One conditional update: of several processes claiming at once, each
     * delivery goes to exactly one (PostgreSQL rechecks the lease of a row another transaction just
     * changed before updating it).
     */
    async claim(token: string, now: Date, until: Date, limit: number, kinds: readonly DeliveryKind[]): Promise<Delivery[]> {
      const at = now.toISOString();
      const due = db.selectFrom('webhook_deliveries as d').select('d.id')
        .where('d.state', '=', 'pending')
        .where((eb) => (kinds.length === 0
          ? eb('d.destination_id', 'is not', null)
          : eb.or([eb('d.destination_id', 'is not', null), eb('d.kind', 'in', kinds)])))
        .where('d.next_attempt_at', '<=', at)
        .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<=', at)]))
        .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as e').select('e.id')
          .whereRef('e.error_id', '=', 'd.error_id').where('e.state', '=', 'pending').whereRef('e.id', '<', 'd.id')
          .where(sql<boolean>`coalesce(e.destination_id, 0) = coalesce(d.destination_id, 0)`))))
        .orderBy('d.id').limit(limit);
      await db.updateTable('webhook_deliveries').set({ lease_owner: token, lease_until: until.toISOString() })
        .where('id', 'in', due)
        .where('state', '=', 'pending')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
        .execute();
      const rows = await db.selectFrom('webhook_deliveries').selectAll()
        .where('lease_owner', '=', token).where('state', '=', 'pending').orderBy('id').execute();
      return rows.map(toDelivery);
    },

    /**
     * Claims, for a digest, every delivery to `destinationId` due at `now` and not held by another
     * claim (at most `limit`), adding them to what `token` holds; answers all `token` holds for it.
     */
    async claimDestination(token: string, destinationId: number, now: Date, until: Date, limit: number): Promise<Delivery[]> {
      const at = now.toISOString();
      const due = db.selectFrom('webhook_deliveries').select('id')
        .where('destination_id', '=', destinationId).where('state', '=', 'pending').where('next_attempt_at', '<=', at)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
        .orderBy('id').limit(limit);
      await db.updateTable('webhook_deliveries').set({ lease_owner: token, lease_until: until.toISOString() })
        .where('id', 'in', due).where('state', '=', 'pending')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
        .execute();
      const rows = await db.selectFrom('webhook_deliveries').selectAll()
        .where('lease_owner', '=', token).where('state', '=', 'pending').where('destination_id', '=', destinationId).orderBy('id').execute();
      return rows.map(toDelivery);
    },

    /**
     * The messages sent to `destinationId` since `since` (a digest is one), and when the oldest of
     * them was sent: the rate limit's minute (docs/alert-routing.md#digests).
     */
    async recentMessages(destinationId: number, since: Date): Promise<{ count: number; oldest: Date | undefined }> {
      const row = await db.selectFrom('webhook_deliveries')
        .select((eb) => [eb.fn.count<number | string>('sent_as').distinct().as('n'), eb.fn.min('delivered_at').as('oldest')])
        .where('destination_id', '=', destinationId).where('state', '=', 'delivered').where('delivered_at', '>', since.toISOString())
        .executeTakeFirstOrThrow();
      return { count: Number(row.n), oldest: row.oldest === null || row.oldest === undefined ? undefined : new Date(row.oldest) };
    },

    /** A try to `url` (where it went, shown by the list) that the receiver accepted. */
    async markDelivered(id: number, token: string, url: string, status: number, attempts: number, at: Date, sentAs?: string): Promise<void> {
      await owned(id, token).set({ state: 'delivered', url, last_status: status, attempts, delivered_at: at.toISOString(), lease_owner: null, lease_until: null, last_error: null, sent_as: sentAs ?? sql<string>`delivery_id` }).execute();
    },

    /** Deliveries `token` holds that one digest `sentAs` carried. */
    async markDigestDelivered(ids: readonly number[], token: string, url: string, status: number, at: Date, sentAs: string): Promise<void> {
      if (ids.length === 0) return;
      await db.updateTable('webhook_deliveries')
        .set((eb) => ({ state: 'delivered', url, last_status: status, attempts: eb('attempts', '+', 1), delivered_at: at.toISOString(), lease_owner: null, lease_until: null, last_error: null, sent_as: sentAs }))
        .where('id', 'in', ids).where('lease_owner', '=', token).where('state', '=', 'pending').execute();
    },

    /** Holds deliveries `token` holds until `at` (the rate limit's minute), giving their claim back, no try counted. */
    async defer(ids: readonly number[], token: string, at: Date): Promise<void> {
      if (ids.length === 0) return;
      await db.updateTable('webhook_deliveries').set({ next_attempt_at: at.toISOString(), lease_owner: null, lease_until: null })
        .where('id', 'in', ids).where('lease_owner', '=', token).where('state', '=', 'pending').execute();
    },

    /** A failed try to `url`: tried again from `nextAttemptAt`, or never (`failed`); `reason` in a few words. */
    async markAttemptFailed(id: number, token: string, url: string, status: number | null, attempts: number, nextAttemptAt: Date | undefined, reason: string | null = null): Promise<void> {
      const lastError = reason === null ? null : reason.slice(0, 255);
      await owned(id, token).set(nextAttemptAt === undefined
        ? { state: 'failed', url, last_status: status, attempts, lease_owner: null, lease_until: null, last_error: lastError }
        : { url, last_status: status, attempts, next_attempt_at: nextAttemptAt.toISOString(), lease_owner: null, lease_until: null, last_error: lastError }).execute();
    },

    /**
     * Deliveries failing since `since`, by destination (null: the built-in webhook or a report): those
     * given up (`failed`, their last try at or after `since`) and those still being tried after a
     * failure (`pending`, attempts > 0). Both read through the `state` index (migration 010).
     */
    async failingByDestination(since: Date): Promise<Array<{ destination_id: number | null; failed: number; retrying: number }>> {
      const rows = await db.selectFrom('webhook_deliveries').select(['destination_id', 'state', (eb) => eb.fn.countAll<number>().as('count')])
        .where((eb) => eb.or([
          eb.and([eb('state', '=', 'failed'), eb('next_attempt_at', '>=', since.toISOString())]),
          eb.and([eb('state', '=', 'pending'), eb('attempts', '>', 0)]),
        ]))
        .groupBy(['destination_id', 'state']).execute();
      const byDestination = new Map<number | null, { destination_id: number | null; failed: number; retrying: number }>();
      for (const row of rows) {
        const id = row.destination_id === null ? null : Number(row.destination_id);
        const entry = byDestination.get(id) ?? { destination_id: id, failed: 0, retrying: 0 };
        if (row.state === 'failed') entry.failed += Number(row.count);
        else entry.retrying += Number(row.count);
        byDestination.set(id, entry);
      }
      return [...byDestination.values()].sort((a, b) => b.failed + b.retrying - (a.failed + a.retrying) || (a.destination_id ?? 0) - (b.destination_id ?? 0));
    },

    /** The latest deliveries to a destination, newest first. */
    async recentForDestination(destinationId: number, limit: number): Promise<Delivery[]> {
      const rows = await db.selectFrom('webhook_deliveries').selectAll().where('destination_id', '=', destinationId).orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toDelivery);
    },

    /** The alerts about an error delivered since `since`, newest first: their kind and when (the error page's chart). */
    async alertsSentFor(errorId: number, since: Date, limit: number): Promise<Array<{ kind: DeliveryKind; at: Date }>> {
      const rows = await db.selectFrom('webhook_deliveries').select(['kind', 'delivered_at'])
        .where('error_id', '=', errorId).where('kind', 'in', ['new', 'spike', 'regression']).where('state', '=', 'delivered')
        .where('delivered_at', '>=', since.toISOString())
        .orderBy('id', 'desc').limit(limit).execute();
      return rows.map((row) => ({ kind: row.kind, at: new Date(row.delivered_at as string | Date) }));
    },

    /** Queues one delivery outside any batch (a destination's test). */
    async insertPending(delivery: Parameters<typeof pendingDelivery>[0], now: Date): Promise<Delivery> {
      const row = await db.insertInto('webhook_deliveries').values(pendingDelivery(delivery, now.toISOString())).returningAll().executeTakeFirstOrThrow();
      return toDelivery(row);
    },

    /** Gives back what `token` holds and did not finish (a stopping process), without counting a try. */
    async release(token: string): Promise<void> {
      await db.updateTable('webhook_deliveries').set({ lease_owner: null, lease_until: null }).where('lease_owner', '=', token).execute();
    },

    async markGone(url: string, at: Date): Promise<void> {
      await db.insertInto('webhook_gone_urls').values({ url, gone_at: at.toISOString() }).onConflict((oc) => oc.column('url').doNothing()).execute();
    },

    async isGone(url: string): Promise<boolean> {
      return (await db.selectFrom('webhook_gone_urls').select('url').where('url', '=', url).executeTakeFirst()) !== undefined;
    },

    /** A page of deliveries in id order, of one state or all, and how many there are. */
    async page(state: DeliveryState | undefined, limit: number, offset: number): Promise<{ items: Delivery[]; total: number }> {
      let rows = db.selectFrom('webhook_deliveries').selectAll();
      let count = db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('total'));
      if (state !== undefined) {
        rows = rows.where('state', '=', state);
        count = count.where('state', '=', state);
      }
      const [items, total] = await Promise.all([rows.orderBy('id').limit(limit).offset(offset).execute(), count.executeTakeFirstOrThrow()]);
      return { items: items.map(toDelivery), total: Number(total.total) };
    },

    async findById(id: number): Promise<Delivery | undefined> {
      const row = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toDelivery(row);
    },

    /**
     * Makes a delivery pending again, due at `now` (its id and body unchanged), its claim dropped: a claim
     * cannot tell a process killed mid-try from one still trying, and the operator asks after a crash.
     * A live sender's try may then be sent twice, with the same delivery id. Undefined when there is none.
     */
    async retry(id: number, now: Date): Promise<Delivery | undefined> {
      const at = now.toISOString();
      const row = await db.updateTable('webhook_deliveries')
        .set({ state: 'pending', next_attempt_at: at, lease_owner: null, lease_until: null })
        .where('id', '=', id)
        .returningAll().executeTakeFirst();
      return row && toDelivery(row);
    },
  };
}

export type WebhookDeliveriesRepository = ReturnType<typeof webhookDeliveriesRepository>;
