import type { User } from '../users/user.js';
import type { UserWhiteList } from '../users/user-white-lists.store.js';
import { baseErrors, type FieldErrors } from './form-fields.js';
import { html, type Html } from './html.js';
import { csrfField, datetime, type PageContext } from './layout.js';

/** A field's messages, tied to its input by `id`-error (the page's other forms have their own `description`). */
function fieldErrors(errors: FieldErrors, name: string, id: string): Html {
  const messages = errors[name];
  return messages ? html`<span class="field-error" id="${id}-error">${name} ${messages.join('; ')}</span>` : html``;
}

function input(id: string, name: string, label: string, max: number, errors: FieldErrors, required: boolean, value = ''): Html {
  const invalid = errors[name] ? html` aria-invalid="true" aria-describedby="${id}-error"` : '';
  return html`<label for="${id}">${label}</label>
<input id="${id}" name="${name}" type="text" maxlength="${max}"${required ? html` required` : ''} value="${value}"${invalid}>
${fieldErrors(errors, name, id)}`;
}

/**
 * The user's allowed addresses on its page (docs/console.md#users, docs/security.md#allowed-addresses):
 * each address or range with its description, and, for a viewer who may change them (users.update),
 * a button removing one and a form adding one. With none, the user is used from anywhere.
 */
export function allowedAddressesSection(context: PageContext, user: User, entries: readonly UserWhiteList[], mayChange: boolean, errors: FieldErrors, typed: { ip?: string; description?: string } = {}): Html {
  const remove = (entry: UserWhiteList) => html`<form method="post" action="/console/users/${user.id}/allowed-addresses/${entry.id}/remove">${csrfField(context.csrf)}<button type="submit" class="danger" aria-label="Remove ${entry.ip}">Remove</button></form>`;
  return html`<section aria-labelledby="allowed-heading">
<h2 id="allowed-heading">Allowed addresses</h2>
${entries.length === 0
    ? html`<p class="muted">None: the account may be used from any address.</p>`
    : html`<p>The account may be used only from these addresses; every other is refused, with every credential.</p>
<table class="allowed-addresses">
<thead><tr><th>Address</th><th>Description</th><th>Added</th>${mayChange ? html`<th></th>` : ''}</tr></thead>
<tbody>${entries.map((entry) => html`<tr><td><code>${entry.ip}</code></td><td>${entry.description}</td><td>${datetime(entry.created_at)}</td>${mayChange ? html`<td>${remove(entry)}</td>` : ''}</tr>`)}</tbody>
</table>`}
${mayChange ? html`${baseErrors(errors)}
<form method="post" action="/console/users/${user.id}/allowed-addresses" class="stacked">${csrfField(context.csrf)}
${input('allow-ip', 'ip', 'Address or CIDR range (IPv4 or IPv6)', 49, errors, true, typed.ip)}
${input('allow-description', 'description', 'Description', 255, errors, false, typed.description)}
<button type="submit">Allow this address</button>
</form>` : ''}
</section>`;
}
