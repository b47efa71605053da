import type { AuditRecorder } from '../audit/audit-trail.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import { FieldErrors, NotFound } from '../shared/problems.js';
import { parseChoice } from '../tracker/query.js';
import type { Page } from '../shared/page.js';
import { displayUrl } from './sender.js';
import type { Delivery, DeliveryState, WebhookDeliveriesRepository } from './deliveries.store.js';

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** Every parameter the list understands. */
const KNOWN = new Set(['page', 'per_page', 'state']);

/** A delivery as the list shows it: its URL without credentials, no body. */
export interface ListedDelivery {
  id: number;
  kind: Delivery['kind'];
  error_id: number;
  url: string;
  state: DeliveryState;
  attempts: number;
  last_status: number | null;
  created_at: Date;
  delivered_at: Date | null;
  destination_id: number | null;
  last_error: string | null;
}

export const listed = (delivery: Delivery): ListedDelivery => ({
  id: delivery.id,
  kind: delivery.kind,
  error_id: delivery.error_id,
  url: displayUrl(delivery.url),
  state: delivery.state,
  attempts: delivery.attempts,
  last_status: delivery.last_status,
  created_at: delivery.created_at,
  delivered_at: delivery.delivered_at,
  destination_id: delivery.destination_id,
  last_error: delivery.last_error,
});

/** What was sent (docs/reporting-and-alerts.md#the-deliveries-list): administrators only. */
export function webhookDeliveries(repository: WebhookDeliveriesRepository, clock: Clock, audit: AuditRecorder, wake: () => void) {
  return {
    async list(actor: Actor, query: Query, limit: number, offset: number): Promise<Page<ListedDelivery>> {
      assertPermitted(actor, 'webhook_deliveries.read');
      const errors = new FieldErrors();
      for (const name of Object.keys(query)) if (name !== '' && !KNOWN.has(name)) errors.add(name, 'is not a parameter of this list');
      errors.throwIfAny();
      const state = query.state === undefined ? undefined : parseChoice<DeliveryState | 'all'>(query, 'state', ['pending', 'failed', 'delivered'], 'all');
      const { items, total } = await repository.page(state === 'all' ? undefined : state, limit, offset);
      return { items: items.map(listed), total };
    },

    /** Sends a delivery again (same id and body), now; a delivered one too, if the operator asks. */
    async retry(actor: Actor, id: number): Promise<ListedDelivery> {
      assertPermitted(actor, 'webhook_deliveries.retry');
      if (!Number.isSafeInteger(id) || id < 1) {
        const errors = new FieldErrors();
        errors.add('id', 'must be a positive integer');
        errors.throwIfAny();
      }
      const delivery = await repository.retry(id, clock());
      if (!delivery) throw new NotFound();
      wake();
      await audit.record(actor, { action: 'webhook_delivery.retry', target_type: 'webhook_delivery', target_id: id, changes: { kind: delivery.kind, error_id: delivery.error_id } });
      return listed(delivery);
    },
  };
}

export type WebhookDeliveries = ReturnType<typeof webhookDeliveries>;
