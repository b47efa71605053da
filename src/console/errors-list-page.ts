import type { InfrastructureError } from '../tracker/infrastructure-error.js';
import type { Triage } from '../tracker/triage.js';
import { type People, personName } from './errors-people.js';
import { html, type Html } from './html.js';
import { ago, csrfField, page, type PageContext } from './layout.js';
import { type Bucket, sparkline } from './svg-charts.js';

/**
 * The filters of the list, as the URL carries them (so a reload or a shared link keeps them). A
 * status left out is `unresolved`, the console's default (docs/console.md#errors); `all` is every status.
 */
export const ERROR_FILTERS = ['status', 'assignee', 'reported', 'error_class', 'q', 'since', 'host', 'component', 'sort', 'direction'] as const;
export type ErrorFilterValues = Partial<Record<(typeof ERROR_FILTERS)[number], string>>;

/** The status filter's choices; the first is the default. */
export const STATUS_CHOICES = ['unresolved', 'resolved', 'ignored', 'snoozed', 'all'] as const;

/** The actions on the selected errors (or on all the filters select) that change their triage, with what the notice says. */
export const BULK_TRIAGE = {
  resolve: ['Resolve', 'Resolved', ''],
  ignore: ['Ignore', 'Ignored', ''],
  reopen: ['Reopen', 'Reopened', ''],
  assign_me: ['Assign to me', 'Assigned', ' to you'],
  unassign: ['Unassign', 'Unassigned', ''],
  snooze_1h: ['Snooze 1 h', 'Snoozed', ' for 1 h'],
  snooze_24h: ['Snooze 24 h', 'Snoozed', ' for 24 h'],
} as const;
export type BulkTriageAction = keyof typeof BULK_TRIAGE;

export interface ErrorsListView {
  filters: ErrorFilterValues;
  /** Field errors of the filters (a 422 of the domain), beside the fields. */
  filterErrors: Record<string, string[]>;
  rows: Array<{ error: InfrastructureError; day: Bucket[]; triage: Triage | undefined }>;
  /** Who errors may be assigned to, as far as the viewer sees (the assignee filter and column). */
  people: People;
  /** Whether the viewer may change triage (infrastructure_errors.triage): the bulk actions are shown. */
  canTriage: boolean;
  total: number;
  page: number;
  perPage: number;
  notice?: string;
}

/** The list's URL with these filters and this page. */
export function errorsListUrl(filters: ErrorFilterValues, page = 1): string {
  const query = new URLSearchParams();
  for (const name of ERROR_FILTERS) {
    const value = filters[name];
    if (value) query.set(name, value);
  }
  if (page > 1) query.set('page', String(page));
  const text = query.toString();
  return text === '' ? '/console/errors' : `/console/errors?${text}`;
}

/**
 * The list's query as the tracker reads it (the API's parser, tracker/query.ts): the console's
 * default status made explicit, `all` left out.
 */
export function listQuery(filters: ErrorFilterValues): Record<string, string> {
  const query: Record<string, string> = {};
  for (const name of ERROR_FILTERS) {
    const value = filters[name];
    if (value) query[name] = value;
  }
  if (query.status === undefined) query.status = 'unresolved';
  else if (query.status === 'all') delete query.status;
  return query;
}

const firstLine = (text: string) => text.split('\n', 1)[0] as string;

function fieldErrors(errors: Record<string, string[]>, name: string): Html {
  const messages = errors[name];
  return messages ? html`<span class="field-error" id="${name}-error">${messages.join('; ')}</span>` : html``;
}

function filterForm(filters: ErrorFilterValues, errors: Record<string, string[]>, people: People): Html {
  const invalid = (name: string) => (errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : '');
  const select = (name: keyof ErrorFilterValues, label: string, choices: Array<[string, string]>) => {
    const current = filters[name] ?? '';
    return html`<div><label for="${name}">${label}</label>
<select id="${name}" name="${name}"${invalid(name)}>${choices.map(([value, text]) => html`<option value="${value}"${value === current ? html` selected` : ''}>${text}</option>`)}</select>${fieldErrors(errors, name)}</div>`;
  };
  const input = (name: keyof ErrorFilterValues, label: string, extra: Html = html``) => html`<div><label for="${name}">${label}</label>
<input id="${name}" name="${name}" maxlength="255" value="${filters[name] ?? ''}"${extra}${invalid(name)}>${fieldErrors(errors, name)}</div>`;
  const assignees: Array<[string, string]> = [['', 'anyone'], ['me', 'me'], ['none', 'no one'], ...[...people].map(([id, login]): [string, string] => [String(id), login])];
  // An assignee given by id whom the picker does not know is kept as it is.
  if (filters.assignee && !assignees.some(([value]) => value === filters.assignee)) assignees.push([filters.assignee, `user #${filters.assignee}`]);
  // Folded behind one button (docs/console.md#errors), so that at 390 px the first rows are in the first screen; open when a filter is refused.
  const set = ERROR_FILTERS.filter((name) => filters[name]).length;
  return html`<details class="filter-panel"${Object.keys(errors).length > 0 ? html` open` : ''}><summary>Filters${set > 0 ? html` <span class="badge">${set}</span>` : ''}</summary>
<form method="get" action="/console/errors" class="filters" aria-label="Filters">
${select('status', 'Status', STATUS_CHOICES.map((value) => [value === 'unresolved' ? '' : value, value]))}
${select('assignee', 'Assignee', assignees)}
${select('reported', 'Reported', [['', 'any'], ['false', 'not reported'], ['true', 'reported']])}
${input('error_class', 'Class')}
${input('q', 'Text', html` type="search"`)}
<div><label for="since">Seen since (UTC)</label>
<input id="since" name="since" maxlength="40" placeholder="2026-11-20T10:00" value="${filters.since ?? ''}"${invalid('since')}>${fieldErrors(errors, 'since')}</div>
${input('host', 'Host')}
${input('component', 'Component')}
${select('sort', 'Sort by', [['', 'last seen'], ['created_at', 'first seen'], ['counter', 'count']])}
${select('direction', 'Order', [['', 'descending'], ['asc', 'ascending']])}
<div class="buttons"><button type="submit">Filter</button> <a href="/console/errors">Clear</a></div>
</form></details>`;
}

function pager(view: ErrorsListView): Html {
  const pages = Math.max(1, Math.ceil(view.total / view.perPage));
  if (pages === 1 && view.page === 1) return html``;
  return html`<nav class="pager" aria-label="Pages">
${view.page > 1 ? html`<a rel="prev" href="${errorsListUrl(view.filters, view.page - 1)}">← Previous</a>` : ''}
<span>Page ${view.page} of ${pages}</span>
${view.page < pages ? html`<a rel="next" href="${errorsListUrl(view.filters, view.page + 1)}">Next →</a>` : ''}
</nav>`;
}

/** An error's triage in a cell: its status (and until when snoozed). */
function statusCell(triage: Triage | undefined, now: Date): Html {
  if (!triage) return html``;
  const until = triage.status === 'snoozed' && triage.snoozed_until ? html` <span class="muted">until ${ago(triage.snoozed_until, now)}</span>` : '';
  return html`<span class="status status-${triage.status}">${triage.status}</span>${until}`;
}

/** The errors list: filters, the count, the table with a sparkline a row (one scale a page), paging, and actions on the selected. */
export function errorsListPage(context: PageContext, view: ErrorsListView): Html {
  const filtered = ERROR_FILTERS.some((name) => name !== 'sort' && name !== 'direction' && name !== 'status' && view.filters[name]);
  const back = errorsListUrl(view.filters, view.page);
  // One vertical scale for the page: its busiest hour, so a taller line is a busier error.
  const scale = Math.max(1, ...view.rows.flatMap(({ day }) => day.map((b) => b.count)));
  const triageActions = view.canTriage ? html`<div class="actions triage-actions">
${(Object.keys(BULK_TRIAGE) as BulkTriageAction[]).map((action) => html`<button type="submit" name="action" value="${action}">${BULK_TRIAGE[action][0]}</button> `)}
<label class="check" for="scope-filter"><input type="checkbox" id="scope-filter" name="scope" value="filter"> <span>Apply to all ${view.total} matching the filters, not only the selected</span></label></div>` : '';
  const status = view.filters.status ?? 'unresolved';
  const table = view.rows.length === 0
    ? html`<p class="empty">${view.total > 0 ? 'No errors on this page.' : filtered || status !== 'unresolved' ? 'No errors match these filters.' : 'No unresolved errors. All quiet.'}</p>`
    : html`<form method="post" action="/console/errors/selected" id="selected">
${csrfField(context.csrf)}<input type="hidden" name="back" value="${back}">
<details class="menu bulk-menu"><summary>Actions on the selected</summary><div class="menu-items">
<div class="actions"><button type="submit" name="action" value="report">Report selected</button>
<button type="submit" name="action" value="delete" class="danger">Delete selected</button></div>
${triageActions}</div></details>
<div class="scroll"><table class="errors">
<thead><tr><th scope="col"><input type="checkbox" data-select-all="id" aria-label="Select all on this page"></th>
<th scope="col">Class</th><th scope="col">Message</th><th scope="col" class="number">Count</th><th scope="col">Last seen</th><th scope="col">Reported</th><th scope="col">Status</th><th scope="col">Assignee</th><th scope="col">24 h</th></tr></thead>
<tbody>
${view.rows.map(({ error, day, triage }) => html`<tr>
<td><input type="checkbox" name="id" value="${error.id}" aria-label="Select error ${error.id}"></td>
<td><a href="/console/errors/${error.id}">${error.error_class}</a></td>
<td class="message" title="${firstLine(error.message)}">${firstLine(error.message)}</td>
<td class="number">${error.counter}</td>
<td>${ago(error.updated_at, context.now)}</td>
<td>${error.reported ? 'yes' : 'no'}</td>
<td class="triage-status">${statusCell(triage, context.now)}</td>
<td class="assignee">${triage?.assignee_id == null ? html`<span class="muted">-</span>` : personName(view.people, triage.assignee_id, context.viewer)}</td>
<td>${sparkline(day, 'in the last 24 hours', scale)}</td>
</tr>`)}
</tbody></table></div>
</form>`;
  return page(context, 'Errors', html`<h1>Errors</h1>
${filterForm(view.filters, view.filterErrors, view.people)}
<p class="total" id="total">${view.total} ${view.total === 1 ? 'error' : 'errors'}${filtered ? ' match' : ''}</p>
${table}
${pager(view)}`, view.notice ? html`${view.notice}` : undefined);
}

/** Asks before deleting the selected errors (the form posts again, confirmed). */
export function confirmDeletePage(context: PageContext, ids: number[], back: string): Html {
  return page(context, 'Delete errors', html`<h1>Delete ${ids.length} ${ids.length === 1 ? 'error' : 'errors'}?</h1>
<p>Their occurrences and counts go too. This cannot be undone.</p>
<form method="post" action="/console/errors/selected">
${csrfField(context.csrf)}<input type="hidden" name="back" value="${back}"><input type="hidden" name="confirmed" value="1">
${ids.map((id) => html`<input type="hidden" name="id" value="${id}">`)}
<button type="submit" name="action" value="delete" class="danger">Delete</button> <a href="${back}">Cancel</a>
</form>`);
}
