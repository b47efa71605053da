import type { InfrastructureError, StoredOccurrence } from '../tracker/infrastructure-error.js';
import { errorReportLimits } from '../shared/limits.js';
import { may } from '../roles/authorization.js';
import { type ActivityEntry, type ErrorNote, NOTE_MAX_CHARS, type Triage } from '../tracker/triage.js';
import { type People, personName } from './errors-people.js';
import { html, type Html } from './html.js';
import { ago, csrfField, datetime, page, type PageContext } from './layout.js';
import { type Bucket, histogram } from './svg-charts.js';

export const CHART_PERIODS = { '24h': '24 h', '7d': '7 d', '30d': '30 d' } as const;
export type ChartPeriod = keyof typeof CHART_PERIODS;

export interface ErrorView {
  error: InfrastructureError;
  period: ChartPeriod;
  buckets: Bucket[];
  byHost: { items: Array<{ value: string | null; count: number }>; total: number };
  byComponent: { items: Array<{ value: string | null; count: number }>; total: number };
  occurrences: { items: StoredOccurrence[]; total: number };
  triage: Triage;
  notes: { items: ErrorNote[]; total: number };
  /** The latest entries of the activity, oldest first, and how many there are in all. */
  activity: { items: ActivityEntry[]; total: number };
  /** Who the error may be assigned to, as far as the viewer sees. */
  people: People;
  /** Field errors of a triage or note form (a 422), beside its fields, and what was typed. */
  formErrors?: Record<string, string[]>;
  draft?: Record<string, string>;
  notice?: string;
  failure?: string;
}

/** Where a frame's method name starts (`:in '` or `:in \``); a fixed string, found in one pass. */
const CALLED_IN = /:in [`']/;

/**
 * A backtrace line as a frame: where, and what (`src/x.ts:42:in 'find'`). Found by position, not by
 * a backtracking pattern, so a line full of `:in '` (a backtrace is anyone's text) costs one pass.
 */
export function frame(line: string): Html {
  const at = line.search(CALLED_IN);
  if (at === -1 || !line.endsWith("'") || at + 5 > line.length - 1) return html`<li><code>${line}</code></li>`;
  return html`<li><code>${line.slice(0, at)}</code> <span class="muted">in</span> <strong>${line.slice(at + 5, -1)}</strong></li>`;
}

function breakdown(caption: string, groups: ErrorView['byHost']): Html {
  if (groups.items.length === 0) return html`<p class="empty">No ${caption.toLowerCase()} recorded.</p>`;
  return html`<table class="breakdown"><caption>${caption} (${groups.total})</caption>
<thead><tr><th scope="col">${caption}</th><th scope="col" class="number">Occurrences</th></tr></thead>
<tbody>${groups.items.map((g) => html`<tr><td>${g.value ?? html`<span class="muted">(none)</span>`}</td><td class="number">${g.count}</td></tr>`)}</tbody></table>`;
}

/** Context is JSON text: shown indented when it reads as JSON, as it is otherwise. */
function contextText(context: string): string {
  try {
    return JSON.stringify(JSON.parse(context), null, 2);
  } catch {
    return context;
  }
}

/**
 * At most `errorReportLimits.shownChars` characters of `text` (never half a surrogate pair), the cut
 * marked, with a link to the whole value: every page about one error stays small however large and
 * deep what it shows (docs/console.md#one-error).
 */
export function shown(text: string, download: string, what: string): Html {
  const limit = errorReportLimits.shownChars;
  if (text.length <= limit) return html`${text}`;
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1] ?? '') ? limit - 1 : limit;
  return html`${text.slice(0, end)}
<span class="muted">… [truncated: ${text.length - end} more characters]</span> <a href="${download}" download>Download the full ${what}</a>`;
}

/** Where an occurrence's context or message is downloaded whole. */
const occurrenceDownload = (errorId: number, occurrenceId: number, field: 'context' | 'message') =>
  `/console/errors/${errorId}/occurrences/${occurrenceId}/${field}`;

function fieldError(errors: Record<string, string[]>, name: string, label = name.replaceAll('_', ' ')): Html {
  const messages = errors[name];
  return messages ? html`<span class="field-error" id="${name}-error">${label} ${messages.join('; ')}</span>` : html``;
}

const invalid = (errors: Record<string, string[]>, name: string) => (errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : '');

/** A one-button form that changes the triage. */
const triageButton = (context: PageContext, id: number, action: string, label: string) =>
  html`<form method="post" action="/console/errors/${id}/triage">${csrfField(context.csrf)}<input type="hidden" name="action" value="${action}"><button type="submit">${label}</button></form>`;

/** What an activity entry's details say, in words (its JSON is written by cmi: docs/api.md#get-sysadmin_toolsinfrastructureerrorsidactivity). */
function activityText(entry: ActivityEntry, people: People, context: PageContext): Html {
  let details: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(entry.details);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) details = parsed as Record<string, unknown>;
  } catch {
    // Shown as the action alone.
  }
  const word = (value: unknown) => (typeof value === 'string' ? value : '?');
  const who = (value: unknown) => (typeof value === 'number' ? personName(people, value, context.viewer) : html`no one`);
  switch (entry.action) {
    case 'first_seen': return html`first seen`;
    case 'status': return html`status ${word(details.from)} → ${word(details.to)}${typeof details.reason === 'string' ? ` (${details.reason})` : ''}`;
    case 'assign': return html`assigned ${who(details.from)} → ${who(details.to)}`;
    case 'note': return html`added a note`;
    case 'note_deleted': return html`deleted a note`;
    case 'report': return html`reported`;
    case 'regression': return html`regressed: occurred again after it was resolved`;
    default: return html`${entry.action}`;
  }
}

/** The triage of the error (docs/console.md#triage): its state, the buttons and forms that change it, its notes, its activity. */
function triageSection(context: PageContext, view: ErrorView): Html {
  const { error, triage, people } = view;
  const errors = view.formErrors ?? {};
  const draft = view.draft ?? {};
  const { viewer } = context;
  const canTriage = may(viewer, 'infrastructure_errors.triage');
  const canNote = may(viewer, 'infrastructure_errors.notes');
  const canDeleteAny = may(viewer, 'infrastructure_errors.notes.delete');
  const assignee = triage.assignee_id === null ? html`<span class="muted">no one</span>` : personName(people, triage.assignee_id, viewer);
  const choices: Array<[string, string]> = [['', '(no one)'], ...[...people].map(([id, login]): [string, string] => [String(id), id === viewer.id ? `${login} (me)` : login])];
  if (triage.assignee_id !== null && !people.has(triage.assignee_id)) choices.push([String(triage.assignee_id), `user #${triage.assignee_id}`]);
  const picked = draft.assignee_id ?? (triage.assignee_id === null ? '' : String(triage.assignee_id));
  const general = [...(errors.status ?? []), ...(errors.base ?? []), ...(errors.action ?? [])];
  const buttons = canTriage ? html`<div class="actions" id="triage-actions">
${triage.status !== 'resolved' ? triageButton(context, error.id, 'resolve', 'Resolve') : ''}
${triage.status !== 'ignored' ? triageButton(context, error.id, 'ignore', 'Ignore') : ''}
${triage.status !== 'unresolved' ? triageButton(context, error.id, 'reopen', 'Reopen') : ''}
${viewer.id !== triage.assignee_id ? triageButton(context, error.id, 'assign_me', 'Assign to me') : ''}
</div>
${general.length > 0 ? html`<p class="error" role="alert" id="triage-error">${general.join('; ')}</p>` : ''}
<div class="columns">
<form method="post" action="/console/errors/${error.id}/triage" class="snooze" aria-label="Snooze">${csrfField(context.csrf)}<input type="hidden" name="action" value="snooze">
<fieldset><legend>Snooze</legend>
<div><label for="snoozed_until">Until (UTC)</label>
<input id="snoozed_until" name="snoozed_until" maxlength="40" placeholder="2026-11-20T10:00" value="${draft.snoozed_until ?? ''}"${invalid(errors, 'snoozed_until')}>${fieldError(errors, 'snoozed_until', 'until')}</div>
<div><label for="snooze_occurrences">or for more occurrences</label>
<input id="snooze_occurrences" name="snooze_occurrences" inputmode="numeric" maxlength="10" value="${draft.snooze_occurrences ?? ''}"${invalid(errors, 'snooze_occurrences')}>${fieldError(errors, 'snooze_occurrences', 'occurrences')}</div>
<button type="submit">Snooze</button></fieldset></form>
<form method="post" action="/console/errors/${error.id}/triage" class="assign" aria-label="Assign">${csrfField(context.csrf)}<input type="hidden" name="action" value="assign">
<fieldset><legend>Assign</legend>
<div><label for="assignee_id">Assignee</label>
<select id="assignee_id" name="assignee_id"${invalid(errors, 'assignee_id')}>${choices.map(([value, label]) => html`<option value="${value}"${value === picked ? html` selected` : ''}>${label}</option>`)}</select>${fieldError(errors, 'assignee_id', 'assignee')}</div>
<button type="submit">Assign</button></fieldset></form>
</div>` : '';
  const notes = view.notes.items.length === 0 ? html`<p class="empty">No notes.</p>` : html`<ol class="notes">${view.notes.items.map((note) => html`<li id="note-${note.id}">
<p class="note-meta">${personName(people, note.author_id, viewer, '(no user)')}, ${ago(note.created_at, context.now)}</p>
<p class="pre note-body">${note.body}</p>
${(note.author_id === viewer.id && canNote) || canDeleteAny ? html`<form method="post" action="/console/errors/${error.id}/notes/${note.id}/delete">${csrfField(context.csrf)}<button type="submit" class="danger" aria-label="Delete note ${note.id}">Delete</button></form>` : ''}
</li>`)}</ol>${view.notes.total > view.notes.items.length ? html`<p class="muted">The first ${view.notes.items.length} of ${view.notes.total} notes.</p>` : ''}`;
  const noteForm = canNote ? html`<form method="post" action="/console/errors/${error.id}/notes" class="note-form">${csrfField(context.csrf)}
<label for="body">New note (plain text)</label>
<textarea id="body" name="body" rows="3" maxlength="${NOTE_MAX_CHARS}"${invalid(errors, 'body')}>${draft.body ?? ''}</textarea>${fieldError(errors, 'body', 'note')}
<button type="submit">Add note</button></form>` : '';
  const activity = view.activity.items.length === 0 ? html`<p class="empty">Nothing yet.</p>` : html`<ol class="activity">${view.activity.items.map((entry) => html`<li>
${ago(entry.at, context.now)} · <span class="actor">${personName(people, entry.actor_id, viewer)}</span> <span class="what">${activityText(entry, people, context)}</span></li>`)}</ol>
${view.activity.total > view.activity.items.length ? html`<p class="muted">The latest ${view.activity.items.length} of ${view.activity.total} entries.</p>` : ''}`;
  return html`<section aria-labelledby="triage-heading" id="triage">
<h2 id="triage-heading">Triage</h2>
<dl class="fields triage">
<dt>status</dt><dd id="triage-status"><span class="status status-${triage.status}">${triage.status}</span></dd>
<dt>assignee</dt><dd id="triage-assignee">${assignee}</dd>
${triage.status === 'snoozed' ? html`<dt>snoozed</dt><dd>${triage.snoozed_until ? html`until ${datetime(triage.snoozed_until)}` : ''}${triage.snoozed_until && triage.snooze_occurrences ? ' or ' : ''}${triage.snooze_occurrences ? html`for ${triage.snooze_occurrences} more occurrences` : ''}</dd>` : ''}
${triage.resolved_at ? html`<dt>resolved</dt><dd>${datetime(triage.resolved_at)}${triage.resolved_by_id === null ? '' : html` by ${personName(people, triage.resolved_by_id, viewer)}`}</dd>` : ''}
${triage.regressed_at ? html`<dt>regressed</dt><dd>${datetime(triage.regressed_at)}</dd>` : ''}
</dl>
${buttons}
</section>
<section aria-labelledby="notes-heading" id="notes">
<h2 id="notes-heading">Notes (${view.notes.total})</h2>
${notes}
${noteForm}
</section>
<section aria-labelledby="activity-heading" id="activity">
<h2 id="activity-heading">Activity</h2>
${activity}
</section>`;
}

/** One error: its nine fields, the backtrace as frames, the chart, the breakdowns, the sample, the actions. */
export function errorPage(context: PageContext, view: ErrorView): Html {
  const { error } = view;
  const frames = error.backtrace.split('\n').filter((line) => line.trim() !== '');
  const content = html`<p class="crumbs"><a href="/console/errors">← Errors</a></p>
<h1>${error.error_class}</h1>
${view.failure ? html`<p class="error" role="alert">${view.failure}</p>` : ''}
<p class="message" id="error-message">${error.message}</p>
<div class="actions">
${error.reported ? html`<span class="badge">Reported</span>` : html`<form method="post" action="/console/errors/${error.id}/report">${csrfField(context.csrf)}<button type="submit">Report</button></form>`}
<a class="button danger" href="/console/errors/${error.id}/delete">Delete…</a>
</div>
<dl class="fields">
<dt>id</dt><dd>${error.id}</dd>
<dt>error_class</dt><dd>${error.error_class}</dd>
<dt>counter</dt><dd>${error.counter}</dd>
<dt>reported</dt><dd>${error.reported ? 'true' : 'false'}</dd>
<dt>created_at</dt><dd>${datetime(error.created_at)}</dd>
<dt>updated_at</dt><dd>${datetime(error.updated_at)} (${ago(error.updated_at, context.now)})</dd>
<dt>fingerprint</dt><dd><code class="wrap">${error.fingerprint}</code></dd>
<dt>message</dt><dd class="pre">${error.message}</dd>
<dt>backtrace</dt><dd>${frames.length === 0 ? html`<span class="muted">none</span>` : html`<ol class="frames">${frames.map(frame)}</ol>`}</dd>
</dl>
${triageSection(context, view)}
<section aria-labelledby="chart-heading">
<h2 id="chart-heading">Occurrences</h2>
<nav class="periods" aria-label="Period">${(Object.keys(CHART_PERIODS) as ChartPeriod[]).map((p) =>
    html`<a href="/console/errors/${error.id}?period=${p}"${p === view.period ? html` aria-current="page"` : ''}>${CHART_PERIODS[p]}</a> `)}</nav>
<figure class="chart">${histogram(view.buckets, `Occurrences per ${view.period === '30d' ? 'day' : 'hour'}, last ${CHART_PERIODS[view.period]}`)}</figure>
</section>
<section aria-labelledby="breakdown-heading">
<h2 id="breakdown-heading">Where</h2>
<div class="columns">${breakdown('Host', view.byHost)}${breakdown('Component', view.byComponent)}</div>
</section>
<section aria-labelledby="sample-heading">
<h2 id="sample-heading">Sample of occurrences (${view.occurrences.items.length} of ${view.occurrences.total} kept)</h2>
${view.occurrences.items.length === 0 ? html`<p class="empty">No occurrences kept.</p>` : html`<div class="scroll"><table class="occurrences">
<thead><tr><th scope="col">When</th><th scope="col">Host</th><th scope="col">Component</th><th scope="col">Request</th><th scope="col">Message</th><th scope="col">Context</th></tr></thead>
<tbody>${view.occurrences.items.map((o) => html`<tr>
<td>${ago(o.occurred_at, context.now)}</td><td>${o.host ?? ''}</td><td>${o.component ?? ''}</td><td><code>${o.request_id ?? ''}</code></td>
<td class="pre">${shown(o.message, occurrenceDownload(error.id, o.id, 'message'), 'message')}</td>
<td><pre>${o.context === null ? '' : shown(contextText(o.context), occurrenceDownload(error.id, o.id, 'context'), 'context')}</pre></td></tr>`)}</tbody></table></div>`}
</section>`;
  return page(context, `${error.error_class} #${error.id}`, content, view.notice ? html`${view.notice}` : undefined);
}

/** Asks before deleting one error. */
export function confirmDeleteErrorPage(context: PageContext, error: InfrastructureError): Html {
  return page(context, 'Delete error', html`<h1>Delete error #${error.id}?</h1>
<p><strong>${error.error_class}</strong>: ${error.message.split('\n', 1)[0]}</p>
<p>Its ${error.counter} ${error.counter === 1 ? 'occurrence goes' : 'occurrences go'} too. This cannot be undone.</p>
<form method="post" action="/console/errors/${error.id}/delete">${csrfField(context.csrf)}
<button type="submit" class="danger">Delete</button> <a href="/console/errors/${error.id}">Cancel</a></form>`);
}
