import type { ServedIngestKey } from '../ingest/ingest-key.js';
import { may } from '../roles/authorization.js';
import { html, type Html } from './html.js';
import { ago, csrfField, page, type PageContext } from './layout.js';

type FieldErrors = Record<string, string[]>;

/** The DSN in a read-only field with a copy button (static/console/console.js). */
function dsnField(key: ServedIngestKey): Html {
  const id = `dsn-${key.id}`;
  return html`<input id="${id}" readonly value="${key.dsn}" aria-label="DSN of ${key.label}" size="70"> <button type="button" data-copy="${id}">Copy</button> <span class="copied" role="status" data-copied-for="${id}"></span>`;
}

/** How each SDK is pointed at the key (docs/sentry.md#setting-up-each-sdk). */
export function snippets(key: ServedIngestKey): Array<[language: string, code: string]> {
  const dsn = key.dsn;
  return [
    ['Node (@sentry/node)', `const Sentry = require('@sentry/node');\nSentry.init({ dsn: '${dsn}' });`],
    ['Python (sentry-sdk)', `import sentry_sdk\nsentry_sdk.init(dsn="${dsn}")`],
    ['Go (sentry-go)', `sentry.Init(sentry.ClientOptions{Dsn: "${dsn}"})\ndefer sentry.Flush(2 * time.Second)`],
    ['Ruby (sentry-raven)', `Raven.configure do |config|\n  config.dsn = '${dsn}'\nend`],
    ['Browser (@sentry/browser)', `Sentry.init({ dsn: '${dsn}' }); // the origin must be in the key's allowed origins`],
  ];
}

export interface IngestKeysListView {
  keys: ServedIngestKey[];
  total: number;
  notice?: string;
  values?: { label?: string; component?: string };
  errors?: FieldErrors;
}

/** The ingest keys, each with its DSN to copy, and a form for a new one (docs/console.md#ingest-keys). */
export function ingestKeysListPage(context: PageContext, view: IngestKeysListView): Html {
  const errors = view.errors ?? {};
  const errorOf = (name: string) => (errors[name] ? html`<span class="field-error" id="${name}-error">${name} ${errors[name].join('; ')}</span>` : '');
  return page(context, 'Ingest keys', html`<h1>Ingest keys</h1>
<p>Point a service's Sentry SDK at a key's DSN: its errors are recorded here, and the key can do nothing else (<a href="/docs">API reference</a>).</p>
<p class="total">${view.total} ${view.total === 1 ? 'key' : 'keys'}</p>
${view.keys.length === 0 ? html`<p class="empty">No ingest keys yet.</p>` : html`<div class="scroll"><table class="ingest-keys">
<thead><tr><th scope="col">Label</th><th scope="col">Component</th><th scope="col">Enabled</th><th scope="col">Limit a minute</th><th scope="col">Dropped</th><th scope="col">Last used</th><th scope="col">DSN</th></tr></thead>
<tbody>${view.keys.map((key) => html`<tr>
<td><a href="/console/ingest-keys/${key.id}">${key.label}</a></td><td>${key.component ?? '-'}</td><td>${key.enabled ? 'yes' : 'no'}</td>
<td>${key.rate_limit_per_minute}</td><td>${key.dropped}</td><td>${key.last_used_at ? ago(key.last_used_at, context.now) : html`<span class="muted">never</span>`}</td><td>${dsnField(key)}</td></tr>`)}</tbody>
</table></div>`}
${may(context.viewer, 'ingest_keys.create') ? html`<h2>New key</h2>
${errors.base ? html`<p class="error" role="alert">${errors.base.join(' ')}</p>` : ''}
<form method="post" action="/console/ingest-keys">${csrfField(context.csrf)}
<label for="label">Label</label><input id="label" name="label" maxlength="255" required value="${view.values?.label ?? ''}"${errors.label ? html` aria-invalid="true" aria-describedby="label-error"` : ''}>${errorOf('label')}
<label for="component">Component</label><input id="component" name="component" maxlength="255" value="${view.values?.component ?? ''}">${errorOf('component')}
<button type="submit">Create</button>
</form>` : ''}`, view.notice ? html`${view.notice}` : undefined);
}

/** One key: its DSN to copy, a snippet per language, and revoking it. */
export function ingestKeyPage(context: PageContext, key: ServedIngestKey, notice?: string): Html {
  return page(context, key.label, html`<h1>${key.label}</h1>
<p>${dsnField(key)}</p>
<dl>
<dt>Component</dt><dd>${key.component ?? '-'}</dd>
<dt>Enabled</dt><dd>${key.enabled ? 'yes' : 'no (its events are refused)'}</dd>
<dt>Rate limit</dt><dd>${key.rate_limit_per_minute} events a minute; ${key.dropped} dropped</dd>
<dt>Browsers may send from</dt><dd>${key.allowed_origins === '' ? 'no origin' : key.allowed_origins}</dd>
<dt>Last used</dt><dd>${key.last_used_at ? ago(key.last_used_at, context.now) : html`<span class="muted">never</span>`}</dd>
</dl>
<h2>Set up an SDK</h2>
${snippets(key).map(([language, code]) => html`<h3>${language}</h3>
<pre><code>${code}</code></pre>`)}
${may(context.viewer, 'ingest_keys.delete') ? html`<h2>Revoke</h2>
<p>Every process refuses the key at once; the errors it sent stay.</p>
<form method="post" action="/console/ingest-keys/${key.id}/revoke">${csrfField(context.csrf)}<button type="submit" class="danger">Revoke this key</button></form>` : ''}`,
  notice ? html`${notice}` : undefined);
}
