import type { AuditEvent } from '../audit/audit-event.js';
import { html, type Html } from './html.js';
import { datetime, page, type PageContext } from './layout.js';

/** The audit page's filters as the form holds them (docs/console.md#audit-log). */
export interface AuditFilterValues {
  actor_id?: string;
  action?: string;
  target_type?: string;
  target_id?: string;
  since?: string;
  until?: string;
}

export const AUDIT_FILTER_NAMES = ['actor_id', 'action', 'target_type', 'target_id', 'since', 'until'] as const;

export interface AuditListView {
  events: AuditEvent[];
  total: number;
  page: number;
  perPage: number;
  filters: AuditFilterValues;
  /** The filters' 422, said above the form (the list is then empty). */
  errors?: Record<string, string[]>;
}

/** The page's address with `filters` and page `n`. */
export function auditUrl(filters: AuditFilterValues, n = 1): string {
  const query = new URLSearchParams();
  for (const name of AUDIT_FILTER_NAMES) {
    const value = filters[name];
    if (value !== undefined && value !== '') query.set(name, value);
  }
  if (n > 1) query.set('page', String(n));
  const text = query.toString();
  return text === '' ? '/console/audit' : `/console/audit?${text}`;
}

const LABELS: Record<(typeof AUDIT_FILTER_NAMES)[number], string> = {
  actor_id: 'Actor id', action: 'Action', target_type: 'Target type', target_id: 'Target id', since: 'Since', until: 'Until',
};

function filterForm(view: AuditListView): Html {
  return html`<form method="get" action="/console/audit" class="filters" role="search" aria-label="Filter the audit log">
${AUDIT_FILTER_NAMES.map((name) => html`<label>${LABELS[name]} <input name="${name}" value="${view.filters[name] ?? ''}" maxlength="64"${name === 'since' || name === 'until' ? html` placeholder="2026-11-26T00:00:00Z"` : ''}></label>`)}
<button type="submit">Filter</button> <a href="/console/audit">Clear</a>
</form>`;
}

/** The trail, newest first, with its filters (docs/console.md#audit-log). */
export function auditListPage(context: PageContext, view: AuditListView): Html {
  const pages = Math.max(1, Math.ceil(view.total / view.perPage));
  const failures = Object.entries(view.errors ?? {}).flatMap(([field, messages]) => messages.map((m) => `${field} ${m}`));
  return page(context, 'Audit log', html`<h1>Audit log</h1>
<p class="hint">Every change made through the API, the console and the local commands: who, how, from where and what changed. Secrets are never recorded.</p>
${filterForm(view)}
${failures.length > 0 ? html`<div class="error" role="alert">${failures.map((m) => html`<p>${m}</p>`)}</div>` : ''}
<p class="total">${view.total} ${view.total === 1 ? 'event' : 'events'}</p>
${view.events.length === 0 ? html`<p class="empty">No events on this page.</p>` : html`<div class="scroll"><table class="audit">
<thead><tr><th scope="col">At</th><th scope="col">Actor</th><th scope="col">Credential</th><th scope="col">Address</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Changes</th><th scope="col">Request</th></tr></thead>
<tbody>${view.events.map((e) => html`<tr>
<td>${datetime(e.at)}</td><td>${e.actor_login}${e.actor_id === null ? '' : html` <span class="muted">#${e.actor_id}</span>`}</td><td>${e.credential}</td><td>${e.address ?? ''}</td>
<td><code>${e.action}</code></td><td>${e.target_type}${e.target_id === null ? '' : html` ${e.target_id}`}</td><td><code class="changes">${e.changes}</code></td><td><code>${e.request_id ?? ''}</code></td></tr>`)}</tbody>
</table></div>`}
${pages > 1 || view.page > 1 ? html`<nav class="pager" aria-label="Pages">${view.page > 1 ? html`<a rel="prev" href="${auditUrl(view.filters, view.page - 1)}">← Previous</a>` : ''}
<span>Page ${view.page} of ${pages}</span>${view.page < pages ? html`<a rel="next" href="${auditUrl(view.filters, view.page + 1)}">Next →</a>` : ''}</nav>` : ''}`);
}
