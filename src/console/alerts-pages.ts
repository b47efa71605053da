import type { ServedDestination, ServedRule } from '../alerts/alert-routing.js';
import type { ListedDelivery } from '../alerts/deliveries.service.js';
import { may } from '../roles/authorization.js';
import { html, type Html } from './html.js';
import { ago, csrfField, page, type PageContext } from './layout.js';

type FieldErrors = Record<string, string[]>;

export interface AlertsView {
  destinations: ServedDestination[];
  rules: ServedRule[];
  notice?: string;
  destinationValues?: Record<string, string>;
  destinationErrors?: FieldErrors;
  ruleValues?: Record<string, string | string[]>;
  ruleErrors?: FieldErrors;
}

const EVENTS = ['new', 'regression', 'spike', 'report'] as const;

function errorsOf(errors: FieldErrors | undefined, prefix: string) {
  const all = errors ?? {};
  return {
    base: all.base ? html`<p class="error" role="alert">${all.base.join(' ')}</p>` : '',
    of: (name: string) => (all[name] ? html`<span class="field-error" id="${prefix}-${name}-error">${name} ${all[name].join('; ')}</span>` : ''),
    invalid: (name: string) => (all[name] ? html` aria-invalid="true" aria-describedby="${prefix}-${name}-error"` : ''),
  };
}

const whereOf = (d: ServedDestination) => (d.kind === 'email' ? `${(JSON.parse(d.to) as string[]).join(', ')} via ${d.smtp_host ?? ''}:${d.smtp_port ?? ''}` : d.url ?? '-');

/**
 * Alert routing (docs/console.md#alerts, docs/alert-routing.md): the destinations (never their
 * secrets: the secret and password fields are write-only), the rules, and forms for new ones.
 */
export function alertsPage(context: PageContext, view: AlertsView): Html {
  const d = errorsOf(view.destinationErrors, 'destination');
  const r = errorsOf(view.ruleErrors, 'rule');
  const dv = view.destinationValues ?? {};
  const rv = view.ruleValues ?? {};
  const checkedEvents = new Set([rv.events ?? []].flat());
  const checkedDestinations = new Set([rv.destination_ids ?? []].flat());
  const canManageDestinations = may(context.viewer, 'alert_destinations.manage');
  const labelOf = new Map(view.destinations.map((x) => [x.id, x.label]));
  return page(context, 'Alerts', html`<h1>Alerts</h1>
<p>Where alerts go and which ones (<a href="/docs">API reference</a>). Every alert links to the error's page here.</p>
<h2>Destinations</h2>
${view.destinations.length === 0 ? html`<p class="empty">No destinations yet.</p>` : html`<div class="scroll"><table class="alert-destinations">
<thead><tr><th scope="col">Label</th><th scope="col">Kind</th><th scope="col">Where</th><th scope="col">Enabled</th><th scope="col">Actions</th></tr></thead>
<tbody>${view.destinations.map((x) => html`<tr>
<td><a href="/console/alerts/destinations/${x.id}">${x.label}</a></td><td>${x.kind}</td><td>${whereOf(x)}</td><td>${x.enabled ? 'yes' : 'no'}</td>
<td>${canManageDestinations ? html`<form method="post" action="/console/alerts/destinations/${x.id}/test" class="inline">${csrfField(context.csrf)}<button type="submit">Send a test</button></form>
<form method="post" action="/console/alerts/destinations/${x.id}/delete" class="inline">${csrfField(context.csrf)}<button type="submit" class="danger">Delete</button></form>` : ''}</td></tr>`)}</tbody>
</table></div>`}
${canManageDestinations ? html`<h3>New destination</h3>
${d.base}
<form method="post" action="/console/alerts/destinations">${csrfField(context.csrf)}
<label for="destination-label">Label</label><input id="destination-label" name="label" maxlength="255" required value="${dv.label ?? ''}"${d.invalid('label')}>${d.of('label')}
<label for="destination-kind">Kind</label><select id="destination-kind" name="kind"${d.invalid('kind')}>${(['webhook', 'slack', 'email'] as const).map((k) => html`<option value="${k}"${dv.kind === k ? html` selected` : ''}>${k}</option>`)}</select>${d.of('kind')}
<label for="destination-url">URL (webhook, slack)</label><input id="destination-url" name="url" maxlength="2048" value="${dv.url ?? ''}"${d.invalid('url')}>${d.of('url')}
<label for="destination-secret">Signing secret (webhook; write-only)</label><input id="destination-secret" name="secret" type="password" autocomplete="new-password" maxlength="255"${d.invalid('secret')}>${d.of('secret')}
<label for="destination-smtp_host">SMTP host (email)</label><input id="destination-smtp_host" name="smtp_host" maxlength="255" value="${dv.smtp_host ?? ''}"${d.invalid('smtp_host')}>${d.of('smtp_host')}
<label for="destination-smtp_port">SMTP port</label><input id="destination-smtp_port" name="smtp_port" inputmode="numeric" maxlength="5" value="${dv.smtp_port ?? ''}"${d.invalid('smtp_port')}>${d.of('smtp_port')}
<label for="destination-smtp_security">SMTP security</label><select id="destination-smtp_security" name="smtp_security">${(['starttls', 'tls', 'none'] as const).map((k) => html`<option value="${k}"${dv.smtp_security === k ? html` selected` : ''}>${k}</option>`)}</select>${d.of('smtp_security')}
<label for="destination-smtp_user">SMTP user</label><input id="destination-smtp_user" name="smtp_user" maxlength="255" autocomplete="off" value="${dv.smtp_user ?? ''}">${d.of('smtp_user')}
<label for="destination-smtp_password">SMTP password (write-only)</label><input id="destination-smtp_password" name="smtp_password" type="password" autocomplete="new-password" maxlength="255">${d.of('smtp_password')}
<label for="destination-from">From (email)</label><input id="destination-from" name="from" maxlength="320" value="${dv.from ?? ''}"${d.invalid('from')}>${d.of('from')}
<label for="destination-to">To (email; separated by commas)</label><input id="destination-to" name="to" maxlength="4096" value="${dv.to ?? ''}"${d.invalid('to')}>${d.of('to')}
<button type="submit">Add destination</button>
</form>` : ''}
<h2>Rules</h2>
${view.rules.length === 0 ? html`<p class="empty">No rules yet.</p>` : html`<div class="scroll"><table class="alert-rules">
<thead><tr><th scope="col">Label</th><th scope="col">Events</th><th scope="col">Matches</th><th scope="col">Destinations</th><th scope="col">Enabled</th><th scope="col">Actions</th></tr></thead>
<tbody>${view.rules.map((x) => {
    const matches = [x.component && `component ${x.component}`, x.host && `host ${x.host}`, x.error_class && `class ${x.error_class}`, x.error_class_prefix && `class starting ${x.error_class_prefix}`].filter(Boolean).join(', ') || 'every error';
    return html`<tr><td>${x.label}</td><td>${(JSON.parse(x.events) as string[]).join(', ')}</td><td>${matches}</td>
<td>${(JSON.parse(x.destination_ids) as number[]).map((id) => labelOf.get(id) ?? `#${id}`).join(', ')}</td><td>${x.enabled ? 'yes' : 'no'}</td>
<td>${may(context.viewer, 'alert_rules.manage') ? html`<form method="post" action="/console/alerts/rules/${x.id}/delete" class="inline">${csrfField(context.csrf)}<button type="submit" class="danger">Delete</button></form>` : ''}</td></tr>`;
  })}</tbody>
</table></div>`}
${may(context.viewer, 'alert_rules.manage') ? html`<h3>New rule</h3>
${r.base}
<form method="post" action="/console/alerts/rules">${csrfField(context.csrf)}
<label for="rule-label">Label</label><input id="rule-label" name="label" maxlength="255" required value="${typeof rv.label === 'string' ? rv.label : ''}"${r.invalid('label')}>${r.of('label')}
<fieldset${r.invalid('events')}><legend>Events</legend>${EVENTS.map((e) => html`<label><input type="checkbox" name="events" value="${e}"${checkedEvents.has(e) ? html` checked` : ''}> ${e}</label>`)}</fieldset>${r.of('events')}
<label for="rule-component">Component</label><input id="rule-component" name="component" maxlength="255" value="${typeof rv.component === 'string' ? rv.component : ''}">${r.of('component')}
<label for="rule-host">Host</label><input id="rule-host" name="host" maxlength="255" value="${typeof rv.host === 'string' ? rv.host : ''}">${r.of('host')}
<label for="rule-error_class">Error class</label><input id="rule-error_class" name="error_class" maxlength="255" value="${typeof rv.error_class === 'string' ? rv.error_class : ''}">${r.of('error_class')}
<label for="rule-error_class_prefix">Error class starts with</label><input id="rule-error_class_prefix" name="error_class_prefix" maxlength="255" value="${typeof rv.error_class_prefix === 'string' ? rv.error_class_prefix : ''}">${r.of('error_class_prefix')}
<fieldset${r.invalid('destination_ids')}><legend>Destinations</legend>${view.destinations.map((x) => html`<label><input type="checkbox" name="destination_ids" value="${String(x.id)}"${checkedDestinations.has(String(x.id)) ? html` checked` : ''}> ${x.label}</label>`)}</fieldset>${r.of('destination_ids')}
<button type="submit">Add rule</button>
</form>` : ''}`, view.notice ? html`${view.notice}` : undefined);
}

/** One destination and its latest deliveries, each failure with its reason. */
export function alertDestinationPage(context: PageContext, destination: ServedDestination, deliveries: ListedDelivery[], notice?: string): Html {
  return page(context, destination.label, html`<h1>${destination.label}</h1>
<dl>
<dt>Kind</dt><dd>${destination.kind}</dd>
<dt>Where</dt><dd>${whereOf(destination)}</dd>
<dt>Enabled</dt><dd>${destination.enabled ? 'yes' : 'no'}</dd>
</dl>
${may(context.viewer, 'alert_destinations.manage') ? html`<form method="post" action="/console/alerts/destinations/${destination.id}/test">${csrfField(context.csrf)}<button type="submit">Send a test</button></form>` : ''}
<h2>Latest deliveries</h2>
${deliveries.length === 0 ? html`<p class="empty">Nothing sent yet.</p>` : html`<div class="scroll"><table class="deliveries">
<thead><tr><th scope="col">Event</th><th scope="col">Error</th><th scope="col">State</th><th scope="col">Tries</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col">Queued</th></tr></thead>
<tbody>${deliveries.map((x) => html`<tr><td>${x.kind}</td><td>${x.error_id === 0 ? '-' : html`<a href="/console/errors/${x.error_id}">#${x.error_id}</a>`}</td><td>${x.state}</td><td>${x.attempts}</td>
<td>${x.last_status === null ? '-' : x.last_status}</td><td>${x.last_error ?? '-'}</td><td>${ago(x.created_at, context.now)}</td></tr>`)}</tbody>
</table></div>`}
<p><a href="/console/alerts">All destinations and rules</a></p>`, notice ? html`${notice}` : undefined);
}
