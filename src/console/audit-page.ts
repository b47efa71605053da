import type { AuditEvent } from '../audit/audit-event.js';
import { html, type Html } from './html.js';
import { datetime, page, type PageContext } from './layout.js';

/** The names of the people and things a page of the trail mentions, by id, as far as the viewer may read them (console/audit.routes.ts). */
export interface AuditNames {
  user: ReadonlyMap<number, string>;
  role: ReadonlyMap<number, string>;
  user_group: ReadonlyMap<number, string>;
  bucket: ReadonlyMap<number, string>;
}
export type NamedKind = keyof AuditNames;

/** Where a named thing's page is: its name links there (ids only in links). */
const PAGES: Record<NamedKind | 'infrastructure_error', string> = {
  user: '/console/users/', role: '/console/roles/', user_group: '/console/groups/', bucket: '/console/buckets/', infrastructure_error: '/console/errors/',
};

/** The fields of `changes` that hold ids of named things (docs/security.md#what-is-audited). */
export const ID_FIELDS: Record<string, NamedKind> = {
  assignee_id: 'user', user_id: 'user', resolved_by_id: 'user', author_id: 'user',
  role_ids: 'role', role_id: 'role', user_group_id: 'user_group', group_id: 'user_group', bucket_id: 'bucket', billing_bucket_id: 'bucket',
};
/** The target types whose targets have names. */
export const NAMED_TARGETS: Record<string, NamedKind> = { user: 'user', role: 'role', user_group: 'user_group', bucket: 'bucket' };

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
  names: AuditNames;
}

/** A named thing: its name linked to its page, else its kind and id linked (a thing deleted since, or one the viewer may not read). */
function named(kind: NamedKind | 'infrastructure_error', id: number, names: AuditNames): Html {
  const name = kind === 'infrastructure_error' ? undefined : names[kind].get(id);
  return html`<a href="${PAGES[kind]}${id}">${name ?? `${kind.replace('_', ' ')} ${id}`}</a>`;
}

function target(e: AuditEvent, names: AuditNames): Html {
  if (e.target_id === null) return html`${e.target_type}`;
  const kind = NAMED_TARGETS[e.target_type] ?? (e.target_type === 'infrastructure_error' ? 'infrastructure_error' : undefined);
  if (kind === undefined) return html`${e.target_type} ${e.target_id}`;
  return html`${e.target_type.replace('_', ' ')} ${named(kind, e.target_id, names)}`;
}

/** One value of a change, as read: nothing as "none", a list by commas, an object as its fields, ids of named things as names. */
function value(given: unknown, names: AuditNames, kind?: NamedKind): Html {
  if (given === null || given === undefined || given === '') return html`<span class="muted">none</span>`;
  if (kind !== undefined && typeof given === 'number') return named(kind, given, names);
  if (Array.isArray(given)) return given.length === 0 ? html`<span class="muted">none</span>` : html`${given.map((item, i) => html`${i > 0 ? ', ' : ''}${value(item, names, kind)}`)}`;
  if (typeof given === 'object') {
    const entries = Object.entries(given as Record<string, unknown>);
    return entries.length === 0 ? html`<span class="muted">none</span>` : html`${entries.map(([name, v], i) => html`${i > 0 ? '; ' : ''}${name} ${value(v, names, ID_FIELDS[name])}`)}`;
  }
  return html`${given as string | number | boolean}`;
}

/** Whether `changes` of this event are before-and-after pairs (an edit) rather than the fields given (a creation) or counts. */
const isEdit = (action: string, changes: Record<string, unknown>) =>
  !/\.(create|clone)$/.test(action) && Object.values(changes).some((v) => Array.isArray(v) && v.length === 2);

/**
 * What changed, as read (docs/console.md#audit-log): a field a line, `field: before → after` for an
 * edit, `field: value` otherwise; never the stored JSON itself.
 */
export function changeList(e: AuditEvent, names: AuditNames): Html {
  let changes: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(e.changes);
    changes = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { value: parsed };
  } catch {
    return html`${e.changes}`;
  }
  const entries = Object.entries(changes);
  if (entries.length === 0) return html`<span class="muted">-</span>`;
  const edit = isEdit(e.action, changes);
  return html`<ul class="diff">${entries.map(([field, change]) => {
    const kind = ID_FIELDS[field];
    if (edit && Array.isArray(change) && change.length === 2) {
      return html`<li><span class="field">${field}</span>: <del>${value(change[0], names, kind)}</del> → <ins>${value(change[1], names, kind)}</ins></li>`;
    }
    return html`<li><span class="field">${field}</span>: ${value(change, names, kind)}</li>`;
  })}</ul>`;
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
<td>${datetime(e.at)}</td><td>${e.actor_id === null ? e.actor_login : html`<a href="/console/users/${e.actor_id}">${e.actor_login}</a>`}</td><td>${e.credential}</td><td>${e.address ?? ''}</td>
<td><code>${e.action}</code></td><td>${target(e, view.names)}</td><td>${changeList(e, view.names)}</td><td><code>${e.request_id ?? ''}</code></td></tr>`)}</tbody>
</table></div>`}
${pages > 1 || view.page > 1 ? html`<nav class="pager" aria-label="Pages">${view.page > 1 ? html`<a rel="prev" href="${auditUrl(view.filters, view.page - 1)}">← Previous</a>` : ''}
<span>Page ${view.page} of ${pages}</span>${view.page < pages ? html`<a rel="next" href="${auditUrl(view.filters, view.page + 1)}">Next →</a>` : ''}</nav>` : ''}`);
}
