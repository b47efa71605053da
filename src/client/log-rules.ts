import { logRuleResource } from '../logs/log-rule.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

/** An operator rule of the log sources (docs/log-sources.md#operator-rules). */
export type LogRule = RecordOf<typeof logRuleResource>;

/** The fields of `POST .../log_rules`: `program` and `component` null (any program; the usual component) when not given. */
export interface NewLogRule {
  label: string;
  /** A glob the whole message must match (`*` any run, `?` one character). */
  pattern: string;
  error_class: string;
  program?: string | null;
  component?: string | null;
  /** Where it is tried among the rules (default: after the last). */
  position?: number;
  enabled?: boolean;
}

/** The fields of `PUT .../log_rules/:id`: any of those of a new rule. */
export type LogRuleChanges = Partial<NewLogRule>;

const RULES = '/sysadmin_tools/infrastructure/log_rules';

/** `client.logRules`: the rules that make matching log records errors (docs/client.md#methods). */
export function logRulesApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(logRuleResource, http.format === 'json' ? unwrap(logRuleResource, answer.body) : answer.body, http.format);
  const path = (id: number) => `${RULES}/${id}`;

  return {
    list(params: PageParams = {}): Promise<Page<LogRule>> {
      return fetchPage(http, logRuleResource, RULES, params);
    },

    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<LogRule, void, undefined> {
      return walkPages((page) => fetchPage(http, logRuleResource, RULES, { ...params, page }), (rule) => rule.id);
    },

    async get(id: number, call: RequestOptions = {}): Promise<LogRule> {
      return one(await http.request('GET', path(id), call));
    },

    async create(fields: NewLogRule, call: RequestOptions = {}): Promise<LogRule> {
      return one(await http.request('POST', RULES, { ...call, body: { log_rule: fields } }));
    },

    /** Answers nothing (204); `get` reads the changed rule. */
    async update(id: number, changes: LogRuleChanges, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', path(id), { ...call, body: { log_rule: changes } });
    },

    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(id), call);
    },
  };
}
