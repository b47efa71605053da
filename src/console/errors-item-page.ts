import type { InfrastructureError, StoredOccurrence } from '../tracker/infrastructure-error.js';
import { errorReportLimits } from '../shared/limits.js';
import { may } from '../roles/authorization.js';
import { type ActivityEntry, type ErrorNote, NOTE_MAX_CHARS, type Triage } from '../tracker/triage.js';
import { type People, personName } from './errors-people.js';
import { html, type Html } from './html.js';
import { ago, csrfField, datetime, page, type PageContext } from './layout.js';
import { type AlertMark, type Bucket, histogram, shareBar } from './svg-charts.js';

export const CHART_PERIODS = { '24h': '24 h', '7d': '7 d', '30d': '30 d' } as const;
export type ChartPeriod = keyof typeof CHART_PERIODS;

export interface ErrorView {
  error: InfrastructureError;
  period: ChartPeriod;
  buckets: Bucket[];
  byHost: { items: Array<{ value: string | null; count: number }>; total: number };
  byComponent: { items: Array<{ value: string | null; count: number }>; total: number };
  /** The releases and environments its occurrences carried, exact (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidreleases). */
  byRelease: { items: Array<{ value: string | null; count: number }>; total: number };
  byEnvironment: { items: Array<{ value: string | null; count: number }>; total: number };
  /** The latest kept occurrences (up to CONTEXT_READ of errors.routes.ts), newest first, and how many are kept. */
  occurrences: { items: StoredOccurrence[]; total: number };
  /** The occurrence the navigator shows, and its position among the kept (0: the newest). */
  shownOccurrence?: { occurrence: StoredOccurrence; position: number };
  /** The alerts sent about the error within the chart's time. */
  alerts: AlertMark[];
  triage: Triage;
  notes: { items: ErrorNote[]; total: number };
  /** The latest entries of the activity, oldest first, and how many there are in all. */
  activity: { items: ActivityEntry[]; total: number };
  /** Who the error may be assigned to, as far as the viewer sees. */
  people: People;
  /** Everyone the page names (the people, and its notes' authors and activity's actors): logins by id. */
  names: People;
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

/** Whose code a frame runs: the application's, a library's, or the runtime's. */
export type FrameOrigin = 'application' | 'library' | 'runtime';

/**
 * Where a backtrace line's code comes from, by its path (docs/console.md#one-error): Node's own
 * (`node:internal/…`, `node:fs`, `internal/…`), Python's standard library (`/lib/python3.12/…`,
 * `<frozen …>`), Go's runtime (`runtime/…`, `GOROOT`, `/usr/local/go/src/…`) are the runtime's;
 * `node_modules/`, `site-packages/`, `dist-packages/`, Go's module cache (`/pkg/mod/`) a library's.
 */
export function frameOrigin(line: string): FrameOrigin {
  const where = line.trim().replace(/^at\s+/, '');
  if (/node_modules[\\/]|site-packages[\\/]|dist-packages[\\/]|[\\/]pkg[\\/]mod[\\/]|[\\/]vendor[\\/]/.test(where)) return 'library';
  if (/(^|[\s(])node:|(^|[\s(])internal[\\/]|<frozen |[\\/]lib[\\/]python\d[\d.]*[\\/]|(^|[\s(])runtime[\\/]|GOROOT|[\\/]usr[\\/](local[\\/])?(lib[\\/])?go[\\/]src[\\/]|[\\/]go[\\/]src[\\/]runtime[\\/]/.test(where)) return 'runtime';
  return 'application';
}

/**
 * The backtrace: the application's frames listed, each run of library or runtime frames folded
 * into one `<details>` that opens on click (no script), saying how many and whose.
 */
export function backtrace(lines: readonly string[]): Html {
  if (lines.length === 0) return html`<p class="muted">No backtrace.</p>`;
  const runs: Array<{ origins: Set<FrameOrigin>; lines: string[] }> = [];
  for (const line of lines) {
    const origin = frameOrigin(line);
    const last = runs.at(-1);
    // A run of other code is one fold, whether library or runtime frames alternate in it.
    if (last && last.origins.has('application') === (origin === 'application')) {
      last.lines.push(line);
      last.origins.add(origin);
    } else runs.push({ origins: new Set([origin]), lines: [line] });
  }
  return html`<ol class="frames">${runs.map((run) => {
    if (run.origins.has('application')) return run.lines.map(frame);
    const n = run.lines.length;
    const whose = run.origins.size === 2 ? 'library and runtime' : [...run.origins][0];
    return html`<li class="folded"><details><summary>${n} ${whose} ${n === 1 ? 'frame' : 'frames'}</summary><ol class="frames-other">${run.lines.map(frame)}</ol></details></li>`;
  })}</ol>`;
}

type Groups = ErrorView['byHost'];

/** A breakdown as bars: each value, its count, and a bar as long as its share of the largest. */
function breakdown(caption: string, groups: Groups, of = ''): Html {
  if (groups.items.length === 0) return html`<p class="empty">No ${caption.toLowerCase()} recorded${of}.</p>`;
  const largest = Math.max(...groups.items.map((g) => g.count));
  return html`<table class="breakdown"><caption>${caption} (${groups.total})</caption>
<thead><tr><th scope="col">${caption}</th><th scope="col" class="number">Occurrences</th><th scope="col" class="share"><span class="visually-hidden">Share</span></th></tr></thead>
<tbody>${groups.items.map((g) => html`<tr><td class="value">${g.value ?? html`<span class="muted">(none)</span>`}</td><td class="number">${g.count}</td><td class="share">${shareBar(g.count, largest)}</td></tr>`)}</tbody></table>`;
}

/** Values of a context shown at most this long, and this many distinct values of one key. */
const VALUE_CHARS = 200;
const VALUES_SHOWN = 10;

/**
 * An occurrence's context as keys and values: each top-level key, and one level into objects
 * (`tags.component`, `user.id`, `request.url`); deeper values as JSON text. Not JSON, or not an
 * object: none (the raw text is shown apart). `event_id` is left out (each event's own).
 */
export function contextEntries(context: string | null): Array<[string, string]> {
  if (context === null) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(context);
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return [];
  const entries: Array<[string, string]> = [];
  const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  for (const [key, value] of Object.entries(parsed)) {
    if (key === 'event_id' || value === null || value === undefined) continue;
    if (typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, innerValue] of Object.entries(value as Record<string, unknown>)) if (innerValue !== null) entries.push([`${key}.${inner}`, text(innerValue)]);
    } else entries.push([key, text(value)]);
  }
  return entries;
}

/** Each key's distinct values over `occurrences`, with how many carried each, the most first (ties by value). */
export function contextValues(occurrences: readonly StoredOccurrence[]): Array<{ key: string; values: Array<{ value: string; count: number }> }> {
  const byKey = new Map<string, Map<string, number>>();
  for (const o of occurrences) {
    for (const [key, value] of contextEntries(o.context)) {
      const values = byKey.get(key) ?? new Map<string, number>();
      values.set(value, (values.get(value) ?? 0) + 1);
      byKey.set(key, values);
    }
  }
  return [...byKey].map(([key, values]) => ({
    key, values: [...values].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)),
  }));
}

const cut = (value: string) => (value.length > VALUE_CHARS ? `${value.slice(0, VALUE_CHARS)}…` : value);

/** The context table: a row per distinct value of each key, with how many occurrences carried it. */
function contextTable(view: ErrorView): Html {
  const { items, total } = view.occurrences;
  const keys = contextValues(items);
  if (keys.length === 0) return html`<p class="empty">No context recorded.</p>`;
  return html`<table class="context"><caption>Context of the ${items.length < total ? `latest ${items.length} of ` : ''}${total} kept ${total === 1 ? 'occurrence' : 'occurrences'}</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Value</th><th scope="col" class="number">Occurrences</th></tr></thead>
<tbody>${keys.map(({ key, values }) => html`${values.slice(0, VALUES_SHOWN).map((v, i) => html`<tr${i === 0 ? html` class="key-first"` : ''}><th scope="row">${i === 0 ? key : html`<span class="visually-hidden">${key}</span>`}</th><td class="value"><code>${cut(v.value)}</code></td><td class="number">${v.count}</td></tr>`)}${values.length > VALUES_SHOWN ? html`<tr><th scope="row"><span class="visually-hidden">${key}</span></th><td colspan="2" class="muted">and ${values.length - VALUES_SHOWN} more values</td></tr>` : ''}`)}</tbody></table>`;
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
function activityText(entry: ActivityEntry, names: People, context: PageContext): Html {
  let details: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(entry.details);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) details = parsed as Record<string, unknown>;
  } catch {
    // Shown as the action alone.
  }
  const word = (value: unknown) => (typeof value === 'string' ? value : '?');
  const who = (value: unknown) => (typeof value === 'number' ? personName(names, value, context.viewer) : html`no one`);
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

/** Who an activity's assignments name (their details' from and to), to be named on the page. */
export function activityPeople(entries: readonly ActivityEntry[]): number[] {
  const ids: number[] = [];
  for (const entry of entries) {
    if (entry.action !== 'assign') continue;
    try {
      const details = JSON.parse(entry.details) as Record<string, unknown>;
      for (const id of [details.from, details.to]) if (typeof id === 'number') ids.push(id);
    } catch {
      // Named by id.
    }
  }
  return ids;
}

/** The triage of the error (docs/console.md#triage): its state, the buttons and forms that change it, its notes, its activity. */
function triageSection(context: PageContext, view: ErrorView): Html {
  const { error, triage, people, names } = view;
  const errors = view.formErrors ?? {};
  const draft = view.draft ?? {};
  const { viewer } = context;
  const canTriage = may(viewer, 'infrastructure_errors.triage');
  const canNote = may(viewer, 'infrastructure_errors.notes');
  const canDeleteAny = may(viewer, 'infrastructure_errors.notes.delete');
  const choices: Array<[string, string]> = [['', '(no one)'], ...[...people].map(([id, login]): [string, string] => [String(id), id === viewer.id ? `${login} (me)` : login])];
  if (triage.assignee_id !== null && !people.has(triage.assignee_id)) choices.push([String(triage.assignee_id), `user #${triage.assignee_id}`]);
  const picked = draft.assignee_id ?? (triage.assignee_id === null ? '' : String(triage.assignee_id));
  const forms = canTriage ? html`<div class="columns">
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
<p class="note-meta">${personName(names, note.author_id, viewer, '(no user)')}, ${ago(note.created_at, context.now)}</p>
<p class="pre note-body">${note.body}</p>
${(note.author_id === viewer.id && canNote) || canDeleteAny ? html`<form method="post" action="/console/errors/${error.id}/notes/${note.id}/delete">${csrfField(context.csrf)}<button type="submit" class="danger" aria-label="Delete note ${note.id}">Delete</button></form>` : ''}
</li>`)}</ol>${view.notes.total > view.notes.items.length ? html`<p class="muted">The first ${view.notes.items.length} of ${view.notes.total} notes.</p>` : ''}`;
  const noteForm = canNote ? html`<form method="post" action="/console/errors/${error.id}/notes" class="note-form">${csrfField(context.csrf)}
<label for="body">New note (plain text)</label>
<textarea id="body" name="body" rows="3" maxlength="${NOTE_MAX_CHARS}"${invalid(errors, 'body')}>${draft.body ?? ''}</textarea>${fieldError(errors, 'body', 'note')}
<button type="submit">Add note</button></form>` : '';
  const activity = view.activity.items.length === 0 ? html`<p class="empty">Nothing yet.</p>` : html`<ol class="activity">${view.activity.items.map((entry) => html`<li>
${ago(entry.at, context.now)} · <span class="actor">${personName(names, entry.actor_id, viewer)}</span> <span class="what">${activityText(entry, names, context)}</span></li>`)}</ol>
${view.activity.total > view.activity.items.length ? html`<p class="muted">The latest ${view.activity.items.length} of ${view.activity.total} entries.</p>` : ''}`;
  return html`<section aria-labelledby="triage-heading" id="triage">
<h2 id="triage-heading">Triage</h2>
${triage.status === 'snoozed' || triage.resolved_at || triage.regressed_at ? html`<dl class="fields triage">
${triage.status === 'snoozed' ? html`<dt>snoozed</dt><dd>${triage.snoozed_until ? html`until ${datetime(triage.snoozed_until)}` : ''}${triage.snoozed_until && triage.snooze_occurrences ? ' or ' : ''}${triage.snooze_occurrences ? html`for ${triage.snooze_occurrences} more occurrences` : ''}</dd>` : ''}
${triage.resolved_at ? html`<dt>resolved</dt><dd>${datetime(triage.resolved_at)}${triage.resolved_by_id === null ? '' : html` by ${personName(names, triage.resolved_by_id, viewer)}`}</dd>` : ''}
${triage.regressed_at ? html`<dt>regressed</dt><dd>${datetime(triage.regressed_at)}</dd>` : ''}
</dl>` : ''}
${forms}
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

/** The triage buttons beside the title (docs/console.md#triage), and what a refused change said. */
function triageButtons(context: PageContext, view: ErrorView): Html {
  const { error, triage } = view;
  const errors = view.formErrors ?? {};
  const general = [...(errors.status ?? []), ...(errors.base ?? []), ...(errors.action ?? [])];
  const buttons = may(context.viewer, 'infrastructure_errors.triage') ? html`<div class="actions" id="triage-actions">
${triage.status !== 'resolved' ? triageButton(context, error.id, 'resolve', 'Resolve') : ''}
${triage.status !== 'ignored' ? triageButton(context, error.id, 'ignore', 'Ignore') : ''}
${triage.status !== 'unresolved' ? triageButton(context, error.id, 'reopen', 'Reopen') : ''}
${context.viewer.id !== triage.assignee_id ? triageButton(context, error.id, 'assign_me', 'Assign to me') : ''}
</div>` : '';
  return html`${buttons}
${general.length > 0 ? html`<p class="error" role="alert" id="triage-error">${general.join('; ')}</p>` : ''}`;
}

/** Where an occurrence of the navigator is: the page with `?occurrence=N` (0: the newest), its period kept. */
const occurrenceUrl = (view: ErrorView, position: number) =>
  `/console/errors/${view.error.id}?${view.period === '24h' ? '' : `period=${view.period}&`}occurrence=${position}#occurrence`;

/** One kept occurrence at a time (newest, previous, next, oldest): when, where, its message and context. */
function occurrenceSection(context: PageContext, view: ErrorView): Html {
  const { error } = view;
  const { total } = view.occurrences;
  const shownOne = view.shownOccurrence;
  if (shownOne === undefined) return html`<section aria-labelledby="occurrence-heading" id="occurrence"><h2 id="occurrence-heading">Occurrences</h2><p class="empty">No occurrences kept.</p></section>`;
  const { occurrence: o, position } = shownOne;
  const step = (to: number, label: string, rel: string) => to === position || to < 0 || to >= total
    ? html`<span class="disabled" aria-disabled="true">${label}</span>`
    : html`<a href="${occurrenceUrl(view, to)}" rel="${rel}">${label}</a>`;
  const entries = contextEntries(o.context);
  return html`<section aria-labelledby="occurrence-heading" id="occurrence">
<h2 id="occurrence-heading">Occurrence <span id="occurrence-position">${position + 1}</span> of ${total} kept</h2>
<nav class="occurrence-nav" aria-label="Occurrences">${step(0, '« Newest', 'first')} ${step(position - 1, '‹ Previous', 'prev')} ${step(position + 1, 'Next ›', 'next')} ${step(total - 1, 'Oldest »', 'last')}</nav>
<table class="occurrence"><tbody>
<tr><th scope="row">when</th><td>${ago(o.occurred_at, context.now)} <span class="muted">${datetime(o.occurred_at)}</span></td></tr>
<tr><th scope="row">host</th><td>${o.host ?? html`<span class="muted">(none)</span>`}</td></tr>
<tr><th scope="row">component</th><td>${o.component ?? html`<span class="muted">(none)</span>`}</td></tr>
${o.request_id === null ? '' : html`<tr><th scope="row">request</th><td><code>${o.request_id}</code></td></tr>`}
<tr><th scope="row">message</th><td class="pre">${shown(o.message, occurrenceDownload(error.id, o.id, 'message'), 'message')}</td></tr>
${entries.map(([key, value]) => html`<tr><th scope="row">${key}</th><td class="value"><code>${cut(value)}</code></td></tr>`)}
</tbody></table>
${o.context === null ? '' : html`<details class="raw"><summary>Context as recorded</summary><pre>${shown(contextText(o.context), occurrenceDownload(error.id, o.id, 'context'), 'context')}</pre></details>`}
</section>`;
}

/** The latest occurrences, a line each, each opening in the navigator. */
function latestOccurrences(context: PageContext, view: ErrorView): Html {
  const items = view.occurrences.items.slice(0, LATEST_LISTED);
  if (items.length === 0) return html``;
  return html`<section aria-labelledby="latest-heading">
<h2 id="latest-heading">Latest occurrences (${items.length} of ${view.occurrences.total} kept)</h2>
<div class="scroll"><table class="occurrences">
<thead><tr><th scope="col">When</th><th scope="col">Host</th><th scope="col">Component</th><th scope="col">Message</th></tr></thead>
<tbody>${items.map((o, i) => html`<tr${view.shownOccurrence?.position === i ? html` aria-current="true"` : ''}>
<td><a href="${occurrenceUrl(view, i)}">${ago(o.occurred_at, context.now)}</a></td><td>${o.host ?? ''}</td><td>${o.component ?? ''}</td><td class="message">${cut(o.message.split('\n', 1)[0] ?? '')}</td></tr>`)}</tbody></table></div>
</section>`;
}

/** Occurrences listed a line each under the navigator. */
const LATEST_LISTED = 20;

/**
 * One error (docs/console.md#one-error): what, how bad, where and since when in the first screen
 * (the title, the triage beside it, the counts, the chart, the breakdowns), then the backtrace, the
 * context, one occurrence at a time, the triage's forms, notes and activity, and the record's fields.
 */
export function errorPage(context: PageContext, view: ErrorView): Html {
  const { error, triage, names } = view;
  const { viewer } = context;
  const frames = error.backtrace.split('\n').filter((line) => line.trim() !== '');
  const assignee = triage.assignee_id === null ? html`<span class="muted">no one</span>` : personName(names, triage.assignee_id, viewer);
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const content = html`<p class="crumbs"><a href="/console/errors">← Errors</a></p>
<div class="error-head">
<div class="error-title">
<h1>${error.error_class}</h1>
<p class="message" id="error-message">${cut(error.message.split('\n', 1)[0] ?? '')}</p>
</div>
<div class="error-triage">
<dl class="facts triage">
<dt>status</dt><dd id="triage-status"><span class="status status-${triage.status}">${triage.status}</span></dd>
<dt>assignee</dt><dd id="triage-assignee">${assignee}</dd>
</dl>
${triageButtons(context, view)}
<div class="actions">
${error.reported ? html`<span class="badge">Reported</span>` : html`<form method="post" action="/console/errors/${error.id}/report">${csrfField(context.csrf)}<button type="submit" class="secondary">Report</button></form>`}
<a class="button danger" href="/console/errors/${error.id}/delete">Delete…</a>
</div>
</div>
</div>
${view.failure ? html`<p class="error" role="alert">${view.failure}</p>` : ''}
<dl class="summary" id="summary">
<div><dt>Occurrences</dt><dd id="counter">${error.counter}</dd></div>
<div><dt>First seen</dt><dd id="first-seen">${ago(error.created_at, context.now)}</dd></div>
<div><dt>Last seen</dt><dd id="last-seen">${ago(error.updated_at, context.now)}</dd></div>
<div><dt>Hosts</dt><dd id="hosts-affected">${view.byHost.total}</dd></div>
<div><dt>Components</dt><dd id="components-affected">${view.byComponent.total}</dd></div>
</dl>
<section aria-labelledby="chart-heading" class="error-chart">
<div class="chart-head"><h2 id="chart-heading">Occurrences over time</h2>
<nav class="periods" aria-label="Period">${(Object.keys(CHART_PERIODS) as ChartPeriod[]).map((p) =>
    html`<a href="/console/errors/${error.id}?period=${p}"${p === view.period ? html` aria-current="page"` : ''}>${CHART_PERIODS[p]}</a> `)}</nav></div>
<figure class="chart">${histogram(view.buckets, `Occurrences per ${view.period === '30d' ? 'day' : 'hour'}, last ${CHART_PERIODS[view.period]}`, view.alerts)}
<figcaption class="muted">UTC. ${view.alerts.length === 0 ? 'No alerts sent in this time.' : html`Dashed lines: ${count(view.alerts.length, 'alert', 'alerts')} sent (${[...new Set(view.alerts.map((a) => a.kind))].join(', ')}).`}</figcaption></figure>
</section>
<section aria-labelledby="breakdown-heading">
<h2 id="breakdown-heading">Where</h2>
<div class="columns breakdowns">${breakdown('Host', view.byHost)}${breakdown('Component', view.byComponent)}${breakdown('Release', view.byRelease)}${breakdown('Environment', view.byEnvironment)}</div>
</section>
<section aria-labelledby="backtrace-heading">
<h2 id="backtrace-heading">Backtrace</h2>
${backtrace(frames)}
</section>
<section aria-labelledby="context-heading">
<h2 id="context-heading">Context</h2>
<div class="scroll">${contextTable(view)}</div>
</section>
${occurrenceSection(context, view)}
${latestOccurrences(context, view)}
${triageSection(context, view)}
<details class="record"><summary>The record's fields</summary>
<dl class="fields">
<dt>id</dt><dd>${error.id}</dd>
<dt>error_class</dt><dd>${error.error_class}</dd>
<dt>counter</dt><dd>${error.counter}</dd>
<dt>reported</dt><dd>${error.reported ? 'true' : 'false'}</dd>
<dt>created_at</dt><dd>${datetime(error.created_at)}</dd>
<dt>updated_at</dt><dd>${datetime(error.updated_at)}</dd>
<dt>fingerprint</dt><dd><code class="wrap">${error.fingerprint}</code></dd>
<dt>message</dt><dd class="pre">${error.message}</dd>
</dl>
</details>`;
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
