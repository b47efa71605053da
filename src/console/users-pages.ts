import type { User } from '../users/user.js';
import { html, type Html } from './html.js';
import { may } from '../roles/authorization.js';
import type { Permission } from '../roles/permissions.js';
import { ago, csrfField, datetime, page, type PageContext } from './layout.js';

type FieldErrors = Record<string, string[]>;

/** The user fields a form edits, as typed. */
export type UserFormValues = Partial<Record<'login' | 'email' | 'first_name' | 'last_name' | 'role' | 'time_zone' | 'locale', string>>;

function errorsFor(errors: FieldErrors, name: string): Html {
  const messages = errors[name];
  return messages ? html`<span class="field-error" id="${name}-error">${name.replace('_', ' ')} ${messages.join('; ')}</span>` : html``;
}

function textField(name: string, label: string, value: string | undefined, errors: FieldErrors, attributes: { type?: string; required?: boolean; autocomplete?: string; max?: number } = {}): Html {
  const invalid = errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : '';
  return html`<label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="${attributes.type ?? 'text'}" maxlength="${attributes.max ?? 255}"${attributes.required ? html` required` : ''}${attributes.autocomplete ? html` autocomplete="${attributes.autocomplete}"` : ''} value="${value ?? ''}"${invalid}>
${errorsFor(errors, name)}`;
}

function roleField(value: string | undefined, errors: FieldErrors): Html {
  const option = (role: string, label: string) => html`<option value="${role}"${(value ?? 'user') === role ? html` selected` : ''}>${label}</option>`;
  return html`<label for="role">Role</label><select id="role" name="role">${option('user', 'User')}${option('admin', 'Administrator')}</select>${errorsFor(errors, 'role')}`;
}

function baseErrors(errors: FieldErrors): Html {
  return errors.base ? html`<p class="error" role="alert">${errors.base.join(' ')}</p>` : html``;
}

export interface UsersListView {
  users: User[];
  total: number;
  page: number;
  perPage: number;
  notice?: string;
}

/** The users list (an ordinary user sees only its own account). */
export function usersListPage(context: PageContext, view: UsersListView): Html {
  const admin = may(context.viewer, 'users.read');
  const pages = Math.max(1, Math.ceil(view.total / view.perPage));
  const link = (n: number) => (n > 1 ? `/console/users?page=${n}` : '/console/users');
  return page(context, 'Users', html`<h1>${admin ? 'Users' : 'My account'}</h1>
${may(context.viewer, 'users.create') ? html`<p><a class="button" href="/console/users/new">New user</a></p>` : ''}
<p class="total">${view.total} ${view.total === 1 ? 'user' : 'users'}</p>
${view.users.length === 0 ? html`<p class="empty">No users on this page.</p>` : html`<div class="scroll"><table class="users">
<thead><tr><th scope="col">Login</th><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>${view.users.map((u) => html`<tr>
<td><a href="/console/users/${u.id}">${u.login}</a></td><td>${u.first_name} ${u.last_name}</td><td>${u.email}</td>
<td>${u.role === 'admin' ? 'Administrator' : 'User'}</td><td><span class="status status-${u.status}">${u.status}</span></td><td>${ago(u.created_at, context.now)}</td></tr>`)}</tbody>
</table></div>`}
${pages > 1 || view.page > 1 ? html`<nav class="pager" aria-label="Pages">${view.page > 1 ? html`<a rel="prev" href="${link(view.page - 1)}">← Previous</a>` : ''}
<span>Page ${view.page} of ${pages}</span>${view.page < pages ? html`<a rel="next" href="${link(view.page + 1)}">Next →</a>` : ''}</nav>` : ''}`,
  view.notice ? html`${view.notice}` : undefined);
}

/** A new user's form, with the API's field errors beside the fields. */
export function newUserPage(context: PageContext, values: UserFormValues, errors: FieldErrors): Html {
  return page(context, 'New user', html`<p class="crumbs"><a href="/console/users">← Users</a></p>
<h1>New user</h1>
${baseErrors(errors)}
<form method="post" action="/console/users" class="stacked">${csrfField(context.csrf)}
${textField('login', 'Login', values.login, errors, { required: true, autocomplete: 'off', max: 40 })}
${textField('email', 'Email', values.email, errors, { type: 'email', required: true, autocomplete: 'off' })}
${textField('first_name', 'First name', values.first_name, errors)}
${textField('last_name', 'Last name', values.last_name, errors)}
${textField('password', 'Password', undefined, errors, { type: 'password', required: true, autocomplete: 'new-password', max: 256 })}
${roleField(values.role, errors)}
<button type="submit">Create user</button>
</form>`);
}

export interface UserView {
  user: User;
  values: UserFormValues;
  errors: FieldErrors;
  passwordErrors: FieldErrors;
  notice?: string;
  /** A new API key, shown this once. */
  apiKey?: string;
}

/** One user: the record, the edit form, the actions, and for one's own account the password form. */
export function userPage(context: PageContext, view: UserView): Html {
  const { user, values, errors, passwordErrors } = view;
  const may_ = (permission: Permission) => may(context.viewer, permission);
  const own = context.viewer.id === user.id;
  const post = (action: string, label: string, cls = '') => html`<form method="post" action="/console/users/${user.id}/${action}">${csrfField(context.csrf)}<button type="submit"${cls ? html` class="${cls}"` : ''}>${label}</button></form>`;
  return page(context, user.login, html`<p class="crumbs"><a href="/console/users">← Users</a></p>
<h1>${user.login} <span class="status status-${user.status}">${user.status}</span></h1>
${view.apiKey === undefined ? '' : html`<section class="api-key" aria-labelledby="key-heading">
<h2 id="key-heading">New API key</h2>
<p>Copy it now: it is shown only this once. The previous key no longer works${own ? ', and your sessions have ended: sign in again afterwards' : ''}.</p>
<p><input id="api-key" readonly value="${view.apiKey}" aria-label="API key" size="44"> <button type="button" data-copy="api-key">Copy</button> <span class="copied" role="status" data-copied-for="api-key"></span></p>
</section>`}
<dl class="fields">
<dt>Role</dt><dd>${user.role === 'admin' ? 'Administrator' : 'User'}</dd>
<dt>Created</dt><dd>${datetime(user.created_at)}</dd>
<dt>Activated</dt><dd>${datetime(user.activated_at)}</dd>
<dt>Suspended</dt><dd>${datetime(user.suspend_at)}</dd>
<dt>Password changed</dt><dd>${datetime(user.password_changed_at)}</dd>
</dl>
<div class="actions">
${may_('users.suspend') && user.status === 'active' && !own ? post('suspend', 'Suspend') : ''}
${may_('users.suspend') && user.status !== 'active' ? post('activate', 'Activate') : ''}
${user.status !== 'deleted' ? post('api-key', 'New API key') : ''}
${may_('users.delete') && !own ? html`<a class="button danger" href="/console/users/${user.id}/delete">Delete…</a>` : ''}
</div>
<section aria-labelledby="edit-heading">
<h2 id="edit-heading">Details</h2>
${baseErrors(errors)}
<form method="post" action="/console/users/${user.id}" class="stacked">${csrfField(context.csrf)}
${textField('login', 'Login', values.login, errors, { required: true, max: 40 })}
${textField('email', 'Email', values.email, errors, { type: 'email', required: true })}
${textField('first_name', 'First name', values.first_name, errors)}
${textField('last_name', 'Last name', values.last_name, errors)}
${textField('time_zone', 'Time zone', values.time_zone, errors, { max: 64 })}
${textField('locale', 'Locale', values.locale, errors, { max: 16 })}
${may_('users.update') ? roleField(values.role, errors) : ''}
<button type="submit">Save</button>
</form>
</section>
${own ? html`<section aria-labelledby="password-heading">
<h2 id="password-heading">Change my password</h2>
${baseErrors(passwordErrors)}
<form method="post" action="/console/users/${user.id}/password" class="stacked">${csrfField(context.csrf)}
${textField('current_password', 'Current password', undefined, passwordErrors, { type: 'password', required: true, autocomplete: 'current-password', max: 1024 })}
${textField('password', 'New password', undefined, passwordErrors, { type: 'password', required: true, autocomplete: 'new-password', max: 256 })}
<button type="submit">Change password</button>
</form>
</section>` : ''}`, view.notice ? html`${view.notice}` : undefined);
}

/** Asks before deleting a user (a first delete marks it deleted; a second removes the record). */
export function confirmDeleteUserPage(context: PageContext, user: User): Html {
  const removes = user.status === 'deleted';
  return page(context, 'Delete user', html`<h1>${removes ? 'Remove' : 'Delete'} ${user.login}?</h1>
<p>${removes ? 'The record goes for good.' : 'The account stops working at once; deleting it again removes the record.'}</p>
<form method="post" action="/console/users/${user.id}/delete">${csrfField(context.csrf)}
<button type="submit" class="danger">${removes ? 'Remove' : 'Delete'}</button> <a href="/console/users/${user.id}">Cancel</a></form>`);
}
