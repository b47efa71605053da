import type { LogSource } from '../logs/log-sources.store.js';
import { errorsListUrl } from './errors-list-page.js';
import { html, type Html } from './html.js';
import { ago, page, type PageContext } from './layout.js';
import { type Bucket, histogram } from './svg-charts.js';

/** The tracker's figures (tracker/tracker.service.ts overview). */
export interface ErrorsOverview {
  day: Bucket[];
  week: Bucket[];
  /** The start of the last 24 h: the lists the figures link to are of errors seen since. */
  since: Date;
  newToday: number;
  regressions: { items: Array<{ id: number; error_class: string; regressed_at: Date }>; total: number };
  hosts: Array<{ value: string; count: number }>;
  components: Array<{ value: string; count: number }>;
}

/** What the overview shows: each part only to a viewer whose permissions read it (undefined: not shown). */
export interface OverviewView {
  errors?: ErrorsOverview;
  /** The start of today (UTC): "new today" links to the errors seen since, first seen first. */
  today: Date;
  deliveries?: Array<{ destination: { id: number; label: string } | null; failed: number; retrying: number }>;
  silent?: { items: LogSource[]; total: number };
}

/** A time as the list's `since` reads it, to the second. */
const sinceOf = (at: Date) => `${at.toISOString().slice(0, 19)}Z`;
const total = (buckets: readonly Bucket[]) => buckets.reduce((sum, b) => sum + b.count, 0);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A figure: its number (a link to what it counts) and what it is. */
function figure(count: number, label: string, href: string, id: string): Html {
  return html`<a class="figure" id="${id}" href="${href}"><span class="figure-count">${count}</span> <span class="figure-label">${label}</span></a>`;
}

function topList(title: string, rows: Array<{ value: string; count: number }>, href: (value: string) => string, id: string): Html {
  return html`<section class="card" aria-labelledby="${id}-title"><h2 id="${id}-title">${title}</h2>
${rows.length === 0 ? html`<p class="muted">None seen in the last 24 h.</p>` : html`<ol class="top" id="${id}">${rows.map((row) => html`<li><a href="${href(row.value)}">${row.value}</a> <span class="number">${row.count}</span></li>`)}</ol>`}
</section>`;
}

function errorsPart(errors: ErrorsOverview, today: Date, now: Date): Html {
  const since = sinceOf(errors.since);
  const weekSince = sinceOf(new Date(now.getTime() - 7 * 86_400_000));
  const dayTotal = total(errors.day);
  return html`<div class="figures">
${figure(dayTotal, 'occurrences in 24 h', errorsListUrl({ status: 'all', since }), 'figure-day')}
${figure(total(errors.week), 'occurrences in 7 d', errorsListUrl({ status: 'all', since: weekSince }), 'figure-week')}
${figure(errors.newToday, errors.newToday === 1 ? 'new error today' : 'new errors today', errorsListUrl({ status: 'all', since: sinceOf(today), sort: 'created_at' }), 'figure-new')}
${figure(errors.regressions.total, errors.regressions.total === 1 ? 'regression in 24 h' : 'regressions in 24 h', errorsListUrl({ since }), 'figure-regressions')}
</div>
<section class="card chart-card" aria-labelledby="chart-day-title"><h2 id="chart-day-title">Errors per hour, last 24 h</h2>
<figure class="chart"><a href="${errorsListUrl({ status: 'all', since })}">${histogram(errors.day, `${plural(dayTotal, 'occurrence')} in the last 24 hours, across the cloud`)}</a></figure></section>
<div class="columns">
${topList('Top hosts', errors.hosts, (host) => errorsListUrl({ status: 'all', host, since }), 'top-hosts')}
${topList('Top components', errors.components, (component) => errorsListUrl({ status: 'all', component, since }), 'top-components')}
<section class="card" aria-labelledby="regressions-title"><h2 id="regressions-title">Regressions</h2>
${errors.regressions.items.length === 0 ? html`<p class="muted">None in the last 24 h.</p>` : html`<ol class="top" id="regressions">${errors.regressions.items.map((e) => html`<li><a href="/console/errors/${e.id}">${e.error_class}</a> ${ago(e.regressed_at, now)}</li>`)}</ol>`}
</section>
</div>
<section class="card chart-card" aria-labelledby="chart-week-title"><h2 id="chart-week-title">Errors per hour, last 7 d</h2>
<figure class="chart"><a href="${errorsListUrl({ status: 'all', since: weekSince })}">${histogram(errors.week, `${plural(total(errors.week), 'occurrence')} in the last 7 days, across the cloud`)}</a></figure></section>`;
}

function deliveriesPart(rows: NonNullable<OverviewView['deliveries']>): Html {
  return html`<section class="card" aria-labelledby="deliveries-title"><h2 id="deliveries-title">Alert deliveries failing</h2>
${rows.length === 0 ? html`<p class="muted" id="deliveries">None failing in the last 24 h.</p>` : html`<ul class="top" id="deliveries">${rows.map((row) => html`<li>${row.destination === null
    ? html`<a href="/console/alerts">built-in webhook or reports</a>`
    : html`<a href="/console/alerts/destinations/${row.destination.id}">${row.destination.label}</a>`}: ${row.failed} failed${row.retrying > 0 ? html`, ${row.retrying} retrying` : ''}</li>`)}</ul>`}
</section>`;
}

function silentPart(silent: NonNullable<OverviewView['silent']>, now: Date): Html {
  return html`<section class="card" aria-labelledby="silent-title"><h2 id="silent-title">Silent log sources</h2>
${silent.total === 0 ? html`<p class="muted" id="silent">None silent.</p>` : html`<ul class="top" id="silent">${silent.items.map((s) => html`<li><a href="/console/sources?${new URLSearchParams({ host: s.host, program: s.program }).toString()}">${s.host}${s.program === '' ? '' : html` ${s.program}`}</a>, last line ${ago(s.last_seen_at, now)}</li>`)}</ul>
${silent.total > silent.items.length ? html`<p><a href="/console/sources">${silent.total - silent.items.length} more</a></p>` : ''}`}
</section>`;
}

/** The administrator's home (docs/console.md#overview): the cloud's errors, deliveries and log sources at a glance. */
export function overviewPage(context: PageContext, view: OverviewView): Html {
  const parts = [
    view.errors ? errorsPart(view.errors, view.today, context.now) : '',
    view.deliveries || view.silent ? html`<div class="columns">${view.deliveries ? deliveriesPart(view.deliveries) : ''}${view.silent ? silentPart(view.silent, context.now) : ''}</div>` : '',
  ];
  const nothing = !view.errors && !view.deliveries && !view.silent;
  return page(context, 'Overview', html`<h1>Overview</h1>
${nothing ? html`<p class="empty">Nothing here for your roles: see <a href="/console/users">your account</a>.</p>` : parts}`);
}
