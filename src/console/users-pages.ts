import type { UserGroup } from '../user-groups/user-group.js';
import type { User } from '../users/user.js';
import type { UserApiKey } from '../users/user-api-keys.store.js';
import type { UserWhiteList } from '../users/user-white-lists.store.js';
import { allowedAddressesSection } from './allowed-addresses-section.js';
import type { TwoFactorStatus } from '../users/two-factor.service.js';
import { twoFactorSection } from './two-factor-section.js';
import type { AccessLogItem } from '../users/last-access-log.store.js';
import { html, type Html } from './html.js';
import { may } from '../roles/authorization.js';
import type { Permission } from '../roles/permissions.js';
import { baseErrors, bucketPicker, type BucketChoice, currentPasswordField, errorsFor, type FieldErrors, rolesPicker, type RoleChoice, textField } from './form-fields.js';
import { ago, csrfField, datetime, page, type PageContext } from './layout.js';

/** The user fields a form edits, as typed; the roles and the bucket as the pickers hold them. */
export type UserFormValues = Partial<Record<'login' | 'email' | 'first_name' | 'last_name' | 'role' | 'time_zone' | 'locale' | 'bucket_id' | 'user_group_id', string>> & { role_ids?: readonly number[] };

function roleField(value: string | undefined, errors: FieldErrors): Html {
  const option = (role: string, label: string) => html`<option value="${role}"${(value ?? 'user') === role ? html` selected` : ''}>${label}</option>`;
  return html`<label for="role">Role</label><select id="role" name="role">${option('user', 'User')}${option('admin', 'Administrator')}</select>${errorsFor(errors, 'role')}`;
}

/** The group picker (none, or one of the user groups). */
function groupField(choices: readonly GroupChoice[], value: string | undefined, errors: FieldErrors): Html {
  const option = (id: string, label: string) => html`<option value="${id}"${(value ?? '') === id ? html` selected` : ''}>${label}</option>`;
  return html`<label for="user_group_id">User group</label><select id="user_group_id" name="user_group_id">${option('', '(none)')}${choices.map((g) => option(String(g.id), g.label))}</select>${errorsFor(errors, 'user_group_id')}`;
}

/** A user group a user may be put in. */
export type GroupChoice = Pick<UserGroup, 'id' | 'label'>;

/** The labels of the roles a user holds, each a link to the role for those who may see roles. */
function heldRoles(context: PageContext, user: User): Html {
  if (user.roles.length === 0) return html`<span class="muted">none</span>`;
  const linked = may(context.viewer, 'roles.read');
  return html`<ul class="inline">${user.roles.map((role) => html`<li>${linked ? html`<a href="/console/roles/${role.id}">${role.label}</a>` : role.label}</li>`)}</ul>`;
}

/** The filters of the users list, as the URL carries them (so a reload or a shared link keeps them). */
export const USER_FILTERS = ['q', 'status', 'role_id', 'user_group_id'] as const;
export type UserFilterValues = Partial<Record<(typeof USER_FILTERS)[number], string>>;

/** The list's URL with these filters and this page. */
export function usersListUrl(filters: UserFilterValues, page = 1): string {
  const query = new URLSearchParams();
  for (const name of USER_FILTERS) {
    const value = filters[name];
    if (value) query.set(name, value);
  }
  if (page > 1) query.set('page', String(page));
  const text = query.toString();
  return text === '' ? '/console/users' : `/console/users?${text}`;
}

export interface UsersListView {
  users: User[];
  total: number;
  page: number;
  perPage: number;
  filters: UserFilterValues;
  /** Field errors of the filters, beside the fields (422). */
  filterErrors: FieldErrors;
  /** The roles to filter by, for a viewer who may see them. */
  roleChoices?: readonly RoleChoice[];
  /** The user groups to filter by, for a viewer who may see them. */
  groupChoices?: readonly GroupChoice[];
  notice?: string;
}

/** Search and filters: for those who see every user (a user's list is its own account). */
function usersFilterForm(view: UsersListView): Html {
  const { filters, filterErrors: errors } = view;
  const invalid = (name: string) => (errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : '');
  const option = (name: 'status' | 'role_id' | 'user_group_id', value: string, label: string) => html`<option value="${value}"${(filters[name] ?? '') === value ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="/console/users" class="filters" role="search" aria-label="Search users">
<div><label for="q">Search</label>
<input id="q" name="q" type="search" maxlength="255" placeholder="login, name or email" value="${filters.q ?? ''}"${invalid('q')}>${errorsFor(errors, 'q')}</div>
<div><label for="status">Status</label>
<select id="status" name="status"${invalid('status')}>${option('status', '', 'any')}${option('status', 'active', 'active')}${option('status', 'suspended', 'suspended')}${option('status', 'deleted', 'deleted')}</select>${errorsFor(errors, 'status')}</div>
${view.roleChoices ? html`<div><label for="role_id">Role</label>
<select id="role_id" name="role_id"${invalid('role_id')}>${option('role_id', '', 'any')}${view.roleChoices.map((role) => option('role_id', String(role.id), role.label))}</select>${errorsFor(errors, 'role_id')}</div>` : ''}
${view.groupChoices ? html`<div><label for="user_group_id">Group</label>
<select id="user_group_id" name="user_group_id"${invalid('user_group_id')}>${option('user_group_id', '', 'any')}${view.groupChoices.map((group) => option('user_group_id', String(group.id), group.label))}</select>${errorsFor(errors, 'user_group_id')}</div>` : ''}
<div class="buttons"><button type="submit">Search</button> <a href="/console/users">Clear</a></div>
</form>`;
}

/** The users list (an ordinary user sees only its own account). */
export function usersListPage(context: PageContext, view: UsersListView): Html {
  const admin = may(context.viewer, 'users.read');
  const pages = Math.max(1, Math.ceil(view.total / view.perPage));
  const link = (n: number) => usersListUrl(view.filters, n);
  const filtered = Object.values(view.filters).some((value) => value);
  return page(context, 'Users', html`<h1>${admin ? 'Users' : 'My account'}</h1>
${may(context.viewer, 'users.create') ? html`<p><a class="button" href="/console/users/new">New user</a></p>` : ''}
${admin ? usersFilterForm(view) : ''}
<p class="total">${view.total} ${view.total === 1 ? 'user' : 'users'}</p>
${view.users.length === 0 ? html`<p class="empty">${filtered ? 'No users match.' : 'No users on this page.'}</p>` : html`<div class="scroll"><table class="users">
<thead><tr><th scope="col">Login</th><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Roles</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>${view.users.map((u) => html`<tr>
<td><a href="/console/users/${u.id}">${u.login}</a></td><td>${u.first_name} ${u.last_name}</td><td>${u.email}</td>
<td>${u.roles.map((r) => r.label).join(', ')}</td><td><span class="status status-${u.status}">${u.status}</span></td><td>${ago(u.created_at, context.now)}</td></tr>`)}</tbody>
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
  /** Whether `apiKey` was added beside the others (a named key) rather than replacing the default one. */
  apiKeyAdded?: boolean;
  /** The user's API keys, when the viewer may manage them (never a key, never its hash). */
  apiKeys?: readonly UserApiKey[];
  /** What is wrong with the description of a key being added (or the current password it needs). */
  apiKeyErrors?: FieldErrors;
  /** What is wrong with the form making the default key anew (the current password it needs). */
  newKeyErrors?: FieldErrors;
  /** The user's allowed addresses, when the viewer may read them; whether it may change them; a refused form's errors and fields. */
  allowedAddresses?: { entries: readonly UserWhiteList[]; mayChange: boolean; errors?: FieldErrors; typed?: { ip?: string; description?: string } };
  /** The roles a holder of users.update (and roles.read) may give; without them, the admin/user choice. */
  roleChoices?: readonly RoleChoice[];
  /** The buckets a holder of users.update (and buckets.read) may put the user in. */
  bucketChoices?: readonly BucketChoice[];
  /** The user's bucket, when the viewer may see buckets (else only its id is shown). */
  bucket?: BucketChoice;
  /** The user groups a holder of users.update (and user_groups.read) may put the user in. */
  groupChoices?: readonly GroupChoice[];
  /** The user's group, when the viewer may see groups (else only its id is shown). */
  group?: GroupChoice;
  /** The user's latest sign-ins, newest first, when the viewer may read them. */
  accessLog?: readonly AccessLogItem[];
  /** Whether the viewer may end the user's sessions (the user itself, holders of users.update). */
  mayEndSessions?: boolean;
  /** The user's second factor, when the viewer is the user or may read users; whether it may turn another's off; a refused form's errors. */
  twoFactor?: { status: TwoFactorStatus; mayTurnOff: boolean; errors?: FieldErrors };
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
<p>Copy it now: it is shown only this once. ${view.apiKeyAdded ? 'The other keys keep working.' : html`The previous key no longer works${own ? ', and your sessions have ended: sign in again afterwards' : ''}.`}</p>
<p><input id="api-key" readonly value="${view.apiKey}" aria-label="API key" size="44"> <button type="button" data-copy="api-key">Copy</button> <span class="copied" role="status" data-copied-for="api-key"></span></p>
</section>`}
<dl class="fields">
<dt>Roles</dt><dd>${heldRoles(context, user)}</dd>
<dt>Billing bucket</dt><dd>${user.bucket_id === null ? html`<span class="muted">none</span>` : view.bucket ? (may_('buckets.read') ? html`<a href="/console/buckets/${user.bucket_id}">${view.bucket.label}</a>` : view.bucket.label) : `#${user.bucket_id}`}</dd>
<dt>User group</dt><dd>${user.user_group_id === null ? html`<span class="muted">none</span>` : view.group ? html`<a href="/console/groups/${user.user_group_id}">${view.group.label}</a>` : `#${user.user_group_id}`}</dd>
<dt>Created</dt><dd>${datetime(user.created_at)}</dd>
<dt>Activated</dt><dd>${datetime(user.activated_at)}</dd>
<dt>Suspended</dt><dd>${datetime(user.suspend_at)}</dd>
<dt>Password changed</dt><dd>${datetime(user.password_changed_at)}</dd>
</dl>
<div class="actions">
${may_('users.suspend') && user.status === 'active' && !own ? post('suspend', 'Suspend') : ''}
${may_('users.suspend') && user.status !== 'active' ? post('activate', 'Activate') : ''}
${view.mayEndSessions === true && user.status === 'active' ? post('sessions/end', own ? 'End all my sessions' : 'End all sessions') : ''}
${user.status !== 'deleted' ? newKeyForm(context, user, view.newKeyErrors ?? {}) : ''}
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
${may_('users.update') ? (view.roleChoices ? rolesPicker(view.roleChoices, values.role_ids, errors) : roleField(values.role, errors)) : ''}
${may_('users.update') && view.bucketChoices ? bucketPicker(view.bucketChoices, values.bucket_id, errors) : ''}
${may_('users.update') && view.groupChoices ? groupField(view.groupChoices, values.user_group_id, errors) : ''}
${currentPasswordField('details', errors, { required: false, hint: 'Needed to change the login or the email.' })}
<button type="submit">Save</button>
</form>
</section>
${view.apiKeys === undefined || user.status === 'deleted' ? '' : apiKeysSection(context, user, view.apiKeys, view.apiKeyErrors ?? {})}
${view.allowedAddresses === undefined || user.status === 'deleted' ? '' : allowedAddressesSection(context, user, view.allowedAddresses.entries, view.allowedAddresses.mayChange, view.allowedAddresses.errors ?? {}, view.allowedAddresses.typed)}
${view.twoFactor === undefined || user.status === 'deleted' ? '' : twoFactorSection(context, user, view.twoFactor.status, view.twoFactor.mayTurnOff, view.twoFactor.errors ?? {})}
${view.accessLog === undefined ? '' : accessLogSection(view.accessLog)}
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

/**
 * The user's API keys (docs/console.md#users): what each is for, when it was made and last used, a
 * button revoking it, and a form adding one beside them. Revoking ends the user's sessions, as the API's.
 */
function apiKeysSection(context: PageContext, user: User, keys: readonly UserApiKey[], errors: FieldErrors): Html {
  const revoke = (key: UserApiKey) => html`<form method="post" action="/console/users/${user.id}/api-keys/${key.id}/revoke">${csrfField(context.csrf)}<button type="submit" class="danger" aria-label="Revoke ${key.description}">Revoke</button></form>`;
  return html`<section aria-labelledby="keys-heading">
<h2 id="keys-heading">API keys</h2>
${keys.length === 0 ? html`<p class="muted">No API keys.</p>` : html`<table class="api-keys">
<thead><tr><th scope="col">Description</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"></th></tr></thead>
<tbody>${keys.map((key) => html`<tr><td>${key.description}${key.default ? html` <span class="muted">(default)</span>` : ''}</td><td>${datetime(key.created_at)}</td><td>${key.last_used_at === null ? html`<span class="muted">never</span>` : datetime(key.last_used_at)}</td><td>${revoke(key)}</td></tr>`)}</tbody>
</table>`}
${baseErrors(errors)}
<form method="post" action="/console/users/${user.id}/api-keys" class="stacked">${csrfField(context.csrf)}
${textField('description', 'What the new key is for', undefined, errors, { required: true, max: 255 })}
${currentPasswordField('add-key', errors, { required: true })}
<button type="submit">Add an API key</button>
</form>
</section>`;
}

/**
 * The user's latest sign-ins and refused sign-ins, newest first (docs/console.md#users; the whole log,
 * oldest first, is GET /users/:id/last_access_log).
 */
function accessLogSection(items: readonly AccessLogItem[]): Html {
  const how = { password: 'Password', api_key: 'API key', console: 'Console', sso: 'Identity provider' } as Record<string, string>;
  return html`<section aria-labelledby="access-heading">
<h2 id="access-heading">Last access</h2>
${items.length === 0 ? html`<p class="muted">No sign-ins recorded.</p>` : html`<table class="access-log">
<thead><tr><th scope="col">When</th><th scope="col">Address</th><th scope="col">How</th><th scope="col">Result</th><th scope="col">User agent</th></tr></thead>
<tbody>${items.map((item) => html`<tr><td>${datetime(item.created_at)}</td><td>${item.ip}</td><td>${how[item.credential] ?? item.credential}</td><td>${item.success ? 'Signed in' : html`<strong>Refused</strong>`}</td><td>${item.user_agent ?? html`<span class="muted">none</span>`}</td></tr>`)}</tbody>
</table>`}
</section>`;
}

/** Makes the user's default API key anew (the old one stops working): with the viewer's current password. */
function newKeyForm(context: PageContext, user: User, errors: FieldErrors): Html {
  return html`<form method="post" action="/console/users/${user.id}/api-key" class="stacked new-key">${csrfField(context.csrf)}
${baseErrors(errors)}
${currentPasswordField('new-key', errors, { required: true })}
<button type="submit">New API key</button></form>`;
}

/** Asks before deleting a user (a first delete marks it deleted; a second removes the record). */
export function confirmDeleteUserPage(context: PageContext, user: User): Html {
  const removes = user.status === 'deleted';
  return page(context, 'Delete user', html`<h1>${removes ? 'Remove' : 'Delete'} ${user.login}?</h1>
<p>${removes ? 'The record goes for good.' : 'The account stops working at once; deleting it again removes the record.'}</p>
<form method="post" action="/console/users/${user.id}/delete">${csrfField(context.csrf)}
<button type="submit" class="danger">${removes ? 'Remove' : 'Delete'}</button> <a href="/console/users/${user.id}">Cancel</a></form>`);
}
