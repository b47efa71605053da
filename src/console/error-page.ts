import type { InfrastructureError } from '../tracker/infrastructure-error.js';
import type { StoredOccurrence } from '../tracker/tracker.store.js';
import { errorReportLimits } from '../shared/limits.js';
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
