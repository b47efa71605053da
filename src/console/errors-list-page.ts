import type { InfrastructureError } from '../tracker/infrastructure-error.js';
import { html, type Html } from './html.js';
import { ago, csrfField, page, type PageContext } from './layout.js';
import { type Bucket, sparkline } from './svg-charts.js';

/** The filters of the list, as the URL carries them (so a reload or a shared link keeps them). */
export const ERROR_FILTERS = ['reported', 'error_class', 'q', 'since'] as const;
export type ErrorFilterValues = Partial<Record<(typeof ERROR_FILTERS)[number], string>>;

export interface ErrorsListView {
  filters: ErrorFilterValues;
  /** Field errors of the filters (a 422 of the domain), beside the fields. */
  filterErrors: Record<string, string[]>;
  rows: Array<{ error: InfrastructureError; day: Bucket[] }>;
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

const firstLine = (text: string) => text.split('\n', 1)[0] as string;

function fieldErrors(errors: Record<string, string[]>, name: string): Html {
  const messages = errors[name];
  return messages ? html`<span class="field-error" id="${name}-error">${messages.join('; ')}</span>` : html``;
}

function filterForm(filters: ErrorFilterValues, errors: Record<string, string[]>): Html {
  const reported = filters.reported ?? '';
  const option = (value: string, label: string) => html`<option value="${value}"${value === reported ? html` selected` : ''}>${label}</option>`;
  const invalid = (name: string) => (errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : '');
  return html`<form method="get" action="/console/errors" class="filters" aria-label="Filters">
<div><label for="reported">Reported</label>
<select id="reported" name="reported"${invalid('reported')}>${option('', 'any')}${option('false', 'not reported')}${option('true', 'reported')}</select>${fieldErrors(errors, 'reported')}</div>
<div><label for="error_class">Class</label>
<input id="error_class" name="error_class" maxlength="255" value="${filters.error_class ?? ''}"${invalid('error_class')}>${fieldErrors(errors, 'error_class')}</div>
<div><label for="q">Text</label>
<input id="q" name="q" type="search" maxlength="255" value="${filters.q ?? ''}"${invalid('q')}>${fieldErrors(errors, 'q')}</div>
<div><label for="since">Seen since (UTC)</label>
<input id="since" name="since" maxlength="40" placeholder="2026-11-20T10:00" value="${filters.since ?? ''}"${invalid('since')}>${fieldErrors(errors, 'since')}</div>
<div class="buttons"><button type="submit">Filter</button> <a href="/console/errors">Clear</a></div>
</form>`;
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

/** The errors list: filters, the count, the table with a sparkline a row, paging, and actions on the selected. */
export function errorsListPage(context: PageContext, view: ErrorsListView): Html {
  const filtered = ERROR_FILTERS.some((name) => view.filters[name]);
  const back = errorsListUrl(view.filters, view.page);
  const table = view.rows.length === 0
    ? html`<p class="empty">${view.total > 0 ? 'No errors on this page.' : filtered ? 'No errors match these filters.' : 'No errors recorded. All quiet.'}</p>`
    : html`<form method="post" action="/console/errors/selected" id="selected">
${csrfField(context.csrf)}<input type="hidden" name="back" value="${back}">
<div class="actions"><button type="submit" name="action" value="report">Report selected</button>
<button type="submit" name="action" value="delete" class="danger">Delete selected</button></div>
<div class="scroll"><table class="errors">
<thead><tr><th scope="col"><input type="checkbox" data-select-all="id" aria-label="Select all on this page"></th>
<th scope="col">Class</th><th scope="col">Message</th><th scope="col" class="number">Count</th><th scope="col">Last seen</th><th scope="col">Reported</th><th scope="col">24 h</th></tr></thead>
<tbody>
${view.rows.map(({ error, day }) => html`<tr>
<td><input type="checkbox" name="id" value="${error.id}" aria-label="Select error ${error.id}"></td>
<td><a href="/console/errors/${error.id}">${error.error_class}</a></td>
<td class="message" title="${firstLine(error.message)}">${firstLine(error.message)}</td>
<td class="number">${error.counter}</td>
<td>${ago(error.updated_at, context.now)}</td>
<td>${error.reported ? 'yes' : 'no'}</td>
<td>${sparkline(day, 'in the last 24 hours')}</td>
</tr>`)}
</tbody></table></div>
</form>`;
  return page(context, 'Errors', html`<h1>Errors</h1>
${filterForm(view.filters, view.filterErrors)}
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
