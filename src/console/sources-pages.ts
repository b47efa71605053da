import type { LogSource } from '../logs/log-sources.store.js';
import { html, type Html } from './html.js';
import { ago, page, type PageContext } from './layout.js';

export interface SourcesListView {
  sources: LogSource[];
  total: number;
  /** The filters shown in the form (host, program, component). */
  filters: { host?: string; program?: string; component?: string };
  /** How many the page lists at most. */
  listed: number;
}

/** The log sources (docs/console.md#log-sources): every host and program that sent, when last, how much. */
export function sourcesListPage(context: PageContext, view: SourcesListView): Html {
  const { filters } = view;
  return page(context, 'Log sources', html`<h1>Log sources</h1>
<p>Every host and program that has sent syslog, journal or OpenTelemetry records, errors or not (<a href="/docs">API reference</a>). An alert rule with <code>silent_minutes</code> tells when one stops.</p>
<form method="get" action="/console/sources" class="filters">
<label for="host">Host</label><input id="host" name="host" maxlength="255" value="${filters.host ?? ''}">
<label for="program">Program</label><input id="program" name="program" maxlength="255" value="${filters.program ?? ''}">
<label for="component">Component</label><input id="component" name="component" maxlength="255" value="${filters.component ?? ''}">
<button type="submit">Filter</button>
</form>
<p class="total">${view.total} ${view.total === 1 ? 'source' : 'sources'}${view.total > view.listed ? html`, the first ${view.listed} shown` : ''}</p>
${view.sources.length === 0 ? html`<p class="empty">No log sources yet.</p>` : html`<div class="scroll"><table class="sources">
<thead><tr><th scope="col">Host</th><th scope="col">Program</th><th scope="col">Component</th><th scope="col">Key</th><th scope="col">Lines</th><th scope="col">Errors</th><th scope="col">First seen</th><th scope="col">Last seen</th></tr></thead>
<tbody>${view.sources.map((source) => html`<tr>
<td>${source.host}</td><td>${source.program === '' ? html`<span class="muted">none</span>` : source.program}</td><td>${source.component ?? '-'}</td>
<td>${source.key_id === null ? '-' : html`<a href="/console/ingest-keys/${source.key_id}">#${source.key_id}</a>`}</td><td>${source.lines}</td><td>${source.errors}</td>
<td>${ago(source.first_seen_at, context.now)}</td><td>${ago(source.last_seen_at, context.now)}</td></tr>`)}</tbody>
</table></div>`}`);
}
