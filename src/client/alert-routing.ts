import { alertDestinationResource, alertRuleResource } from '../alerts/alert-routing.resource.js';
import { deliveryResource } from '../alerts/delivery.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { type Delivery, type RecordOf, decodeRecord, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

const DESTINATIONS = '/sysadmin_tools/alert_destinations';
const RULES = '/sysadmin_tools/alert_rules';

/** An alert destination (docs/alert-routing.md#destinations): `secret` and `smtp_password` are always null. */
export type AlertDestination = Omit<RecordOf<typeof alertDestinationResource>, 'to'> & { to: string[] };
/** An alert rule (docs/alert-routing.md#rules). */
export type AlertRule = Omit<RecordOf<typeof alertRuleResource>, 'events' | 'destination_ids'> & { events: string[]; destination_ids: number[] };

/** The fields of a new destination; what its kind needs is required (docs/alert-routing.md#destinations). */
export interface NewAlertDestination {
  label: string;
  kind: 'webhook' | 'slack' | 'email';
  url?: string | null;
  secret?: string | null;
  smtp_host?: string | null;
  smtp_port?: number | null;
  smtp_security?: 'none' | 'starttls' | 'tls';
  smtp_user?: string | null;
  smtp_password?: string | null;
  from?: string | null;
  to?: string[];
  enabled?: boolean;
}
export type AlertDestinationChanges = Partial<NewAlertDestination>;

/** The fields of a new rule (docs/alert-routing.md#rules). */
export interface NewAlertRule {
  label: string;
  events: Array<'new' | 'regression' | 'spike' | 'report' | 'silent' | 'back'>;
  destination_ids: number[];
  component?: string | null;
  host?: string | null;
  error_class?: string | null;
  error_class_prefix?: string | null;
  spike_threshold?: number | null;
  spike_window?: number | null;
  cooldown?: number | null;
  /** A source in the rule's scope silent this many minutes raises `silent`, then `back` (docs/alert-routing.md#silent-sources). */
  silent_minutes?: number | null;
  enabled?: boolean;
}
export type AlertRuleChanges = Partial<NewAlertRule>;

/** `client.alertDestinations`: where alerts go (docs/alert-routing.md). */
export function alertDestinationsApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(alertDestinationResource, http.format === 'json' ? unwrap(alertDestinationResource, answer.body) : answer.body, http.format) as unknown as AlertDestination;
  const path = (id: number) => `${DESTINATIONS}/${id}`;
  return {
    list(params: PageParams = {}): Promise<Page<AlertDestination>> {
      return fetchPage(http, alertDestinationResource, DESTINATIONS, params) as unknown as Promise<Page<AlertDestination>>;
    },
    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<AlertDestination, void, undefined> {
      return walkPages((page) => this.list({ ...params, page }), (destination) => destination.id);
    },
    async get(id: number, call: RequestOptions = {}): Promise<AlertDestination> {
      return one(await http.request('GET', path(id), call));
    },
    async create(fields: NewAlertDestination, call: RequestOptions = {}): Promise<AlertDestination> {
      return one(await http.request('POST', DESTINATIONS, { ...call, body: { alert_destination: fields } }));
    },
    /** Answers nothing (204); `get` reads the changed destination. */
    async update(id: number, changes: AlertDestinationChanges, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', path(id), { ...call, body: { alert_destination: changes } });
    },
    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(id), call);
    },
    /** Sends a sample alert; answers its delivery once tried (docs/alert-routing.md#testing-a-destination). */
    async test(id: number, call: RequestOptions = {}): Promise<Delivery> {
      const answer = await http.request('POST', `${path(id)}/test`, call);
      return decodeRecord(deliveryResource, http.format === 'json' ? unwrap(deliveryResource, answer.body) : answer.body, http.format);
    },
    /** Its latest 20 deliveries, newest first. */
    async deliveries(id: number, call: RequestOptions = {}): Promise<Delivery[]> {
      const answer = await http.request('GET', `${path(id)}/deliveries`, call);
      const items = (Array.isArray(answer.body) ? answer.body : []) as unknown[];
      return items.map((item) => decodeRecord(deliveryResource, http.format === 'json' ? unwrap(deliveryResource, item) : item, http.format));
    },
  };
}

/** `client.alertRules`: which events of which errors go where (docs/alert-routing.md#rules). */
export function alertRulesApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(alertRuleResource, http.format === 'json' ? unwrap(alertRuleResource, answer.body) : answer.body, http.format) as unknown as AlertRule;
  const path = (id: number) => `${RULES}/${id}`;
  return {
    list(params: PageParams = {}): Promise<Page<AlertRule>> {
      return fetchPage(http, alertRuleResource, RULES, params) as unknown as Promise<Page<AlertRule>>;
    },
    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<AlertRule, void, undefined> {
      return walkPages((page) => this.list({ ...params, page }), (rule) => rule.id);
    },
    async get(id: number, call: RequestOptions = {}): Promise<AlertRule> {
      return one(await http.request('GET', path(id), call));
    },
    async create(fields: NewAlertRule, call: RequestOptions = {}): Promise<AlertRule> {
      return one(await http.request('POST', RULES, { ...call, body: { alert_rule: fields } }));
    },
    async update(id: number, changes: AlertRuleChanges, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', path(id), { ...call, body: { alert_rule: changes } });
    },
    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(id), call);
    },
  };
}
