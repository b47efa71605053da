import { type IdentityProvider, PROVIDER_KINDS, type ProviderKind, SECRET_SETTINGS, shownSettings } from '../identity/identity-provider.js';
import { mayChangeProviders } from '../identity/identity-providers.service.js';
import { checkbox, errorsFor, type FieldErrors, type RoleChoice, textField } from './form-fields.js';
import { html, type Html } from './html.js';
import { ago, csrfField, datetime, page, type PageContext } from './layout.js';

/** What each kind is called on the pages. */
export const KIND_NAMES: Readonly<Record<ProviderKind, string>> = { oidc: 'OpenID Connect', saml: 'SAML 2.0', ldap: 'LDAP' };

/** How a setting is edited: a line of text, a secret (write-only), a block of text, a flag, a choice, a list of names. */
type Control = 'text' | 'secret' | 'textarea' | 'flag' | 'select' | 'names';

interface SettingField {
  name: string;
  label: string;
  control: Control;
  max?: number;
  hint?: string;
  options?: readonly string[];
}

/**
 * The settings each kind's form holds, in the order shown (identity/identity-provider.ts reads and
 * checks them; docs/security.md#identity-providers says what each is).
 */
export const SETTING_FIELDS: Readonly<Record<ProviderKind, readonly SettingField[]>> = {
  oidc: [
    { name: 'issuer', label: 'Issuer URL', control: 'text', max: 2048, hint: 'Discovery reads <issuer>/.well-known/openid-configuration.' },
    { name: 'client_id', label: 'Client id', control: 'text' },
    { name: 'client_secret', label: 'Client secret (write-only)', control: 'secret', max: 1024 },
    { name: 'scopes', label: 'Scopes', control: 'names', max: 1024, hint: 'Separated by spaces.' },
    { name: 'login_claim', label: 'Login claim', control: 'text' },
    { name: 'email_claim', label: 'Email claim', control: 'text' },
    { name: 'groups_claim', label: 'Groups claim', control: 'text' },
  ],
  saml: [
    { name: 'idp_metadata_url', label: 'Identity provider metadata URL', control: 'text', max: 2048, hint: 'Give this or the metadata itself below, not both.' },
    { name: 'idp_metadata_xml', label: 'Identity provider metadata (XML)', control: 'textarea', max: 262_144 },
    { name: 'name_id_format', label: 'NameID format', control: 'select', options: ['persistent', 'email'], hint: 'The NameID links the person to its account; a transient one changes at every sign-in.' },
    { name: 'login_attribute', label: 'Login attribute', control: 'text' },
    { name: 'email_attribute', label: 'Email attribute', control: 'text' },
    { name: 'groups_attribute', label: 'Groups attribute', control: 'text' },
  ],
  ldap: [
    { name: 'url', label: 'Directory URL', control: 'text', max: 2048, hint: 'ldaps://host:port, or ldap://host:port with StartTLS.' },
    { name: 'start_tls', label: 'StartTLS', control: 'flag' },
    { name: 'ca_certificate', label: 'CA certificate (PEM; empty: the system\'s)', control: 'textarea', max: 65_536 },
    { name: 'bind_dn', label: 'Service account DN', control: 'text', max: 1024, hint: 'Empty: the user filter is a DN template such as uid={login},ou=people,dc=example,dc=org.' },
    { name: 'bind_password', label: 'Service account password (write-only)', control: 'secret', max: 1024 },
    { name: 'base_dn', label: 'Base DN', control: 'text', max: 1024 },
    { name: 'user_filter', label: 'User filter', control: 'text', max: 1024, hint: 'Holds {login}, e.g. (&(objectClass=inetOrgPerson)(uid={login})).' },
    { name: 'group_attribute', label: 'Group attribute', control: 'text' },
    { name: 'allow_basic_auth', label: 'Allow HTTP Basic on the API with the directory\'s password', control: 'flag' },
  ],
};

/** A mapping's row as the form holds it (ids as typed). */
export interface MappingRow {
  group: string;
  role_ids: string[];
  user_group_id: string;
}

/** What a provider's form holds: its settings as text (flags as booleans), secrets never. */
export interface ProviderFormValues {
  label: string;
  enabled: boolean;
  jit_provisioning: boolean;
  settings: Record<string, string | boolean>;
  mappings: MappingRow[];
}

/** A user group a mapping may put people in. */
export interface UserGroupChoice {
  id: number;
  label: string;
}

/** The roles and user groups the mapping rows offer by name: those the viewer may see (else ids are typed). */
export interface MappingChoices {
  roleChoices?: readonly RoleChoice[];
  userGroupChoices?: readonly UserGroupChoice[];
}

/** The empty rows every form offers beside the kept mappings (saving gives more). */
export const BLANK_ROWS = 2;

/** A new provider's values: the kind's defaults (identity/identity-provider.ts), enabled, no mapping. */
export function defaultValues(kind: ProviderKind): ProviderFormValues {
  const defaults: Record<ProviderKind, Record<string, string | boolean>> = {
    oidc: { scopes: 'openid email profile', login_claim: 'preferred_username', email_claim: 'email', groups_claim: 'groups' },
    saml: { name_id_format: 'persistent', login_attribute: 'uid', email_attribute: 'mail', groups_attribute: 'groups' },
    ldap: { group_attribute: 'memberOf', start_tls: false, allow_basic_auth: false },
  };
  return { label: '', enabled: true, jit_provisioning: false, settings: defaults[kind], mappings: [] };
}

/** A kept provider's values for its form: the settings as served (its secrets never). */
export function valuesOf(provider: IdentityProvider): ProviderFormValues {
  const shown = shownSettings(provider);
  const settings: Record<string, string | boolean> = {};
  for (const field of SETTING_FIELDS[provider.kind]) {
    const value = shown[field.name];
    if (field.control === 'secret') continue;
    settings[field.name] = typeof value === 'boolean' ? value : Array.isArray(value) ? value.join(' ') : typeof value === 'string' ? value : '';
  }
  return {
    label: provider.label, enabled: provider.enabled, jit_provisioning: provider.jit_provisioning, settings,
    mappings: provider.mappings.map((m) => ({ group: m.group, role_ids: m.role_ids.map(String), user_group_id: m.user_group_id === null ? '' : String(m.user_group_id) })),
  };
}

/** The form's name of a mapping row's field. */
export const rowField = (index: number, field: keyof MappingRow | 'remove') => `mappings-${index}-${field}`;

/**
 * The API's field errors by the form's names (`settings.issuer` is `issuer`, `mappings[0].group` is
 * `mappings-0-group`), and those no field shows, said above the form with their API names.
 */
function formErrors(kind: ProviderKind, errors: FieldErrors, rows: number): { local: FieldErrors; rest: string[] } {
  const local: FieldErrors = {};
  const rest: string[] = [...(errors.base ?? [])];
  const shown = new Set(['label', 'jit_provisioning', 'enabled', 'settings', 'mappings', ...SETTING_FIELDS[kind].map((f) => f.name)]);
  for (const [key, messages] of Object.entries(errors)) {
    if (key === 'base') continue;
    const row = /^mappings\[(\d+)\](?:\.(group|role_ids|user_group_id))?$/.exec(key);
    const name = row ? (Number(row[1]) < rows ? rowField(Number(row[1]), (row[2] ?? 'group') as keyof MappingRow) : undefined) : key.startsWith('settings.') ? key.slice('settings.'.length) : key;
    if (name !== undefined && (row || shown.has(name))) local[name] = [...(local[name] ?? []), ...messages];
    else rest.push(...messages.map((m) => `${key} ${m}`));
  }
  return { local, rest };
}

/** A mapping row's field error, named as the row shows it ("group", "roles", "user group"). */
function rowError(errors: FieldErrors, name: string, label: string): Html {
  const messages = errors[name];
  return messages ? html`<span class="field-error" id="${name}-error">${label} ${messages.join('; ')}</span>` : html``;
}

const invalidOf = (errors: FieldErrors, name: string): Html | string => (errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : '');

/** A mapping row's line of text (its group, or ids typed). */
function rowText(name: string, label: string, value: string, errors: FieldErrors, short: string, max: number): Html {
  return html`<label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="text" maxlength="${max}" value="${value}"${invalidOf(errors, name)}>
${rowError(errors, name, short)}`;
}

function textArea(name: string, label: string, value: string, errors: FieldErrors, max: number): Html {
  return html`<label for="${name}">${label}</label>
<textarea id="${name}" name="${name}" rows="6" cols="70" maxlength="${max}"${errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : ''}>${value}</textarea>
${errorsFor(errors, name)}`;
}

function selectField(name: string, label: string, value: string, options: readonly string[], errors: FieldErrors, hint?: string): Html {
  return html`<label for="${name}">${label}</label>
<select id="${name}" name="${name}"${errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : hint ? html` aria-describedby="${name}-hint"` : ''}>${options.map((o) => html`<option value="${o}"${o === value ? html` selected` : ''}>${o}</option>`)}</select>
${hint ? html`<span class="hint" id="${name}-hint">${hint}</span>` : ''}
${errorsFor(errors, name)}`;
}

/** One setting's control; a secret's field is never filled in, and says whether one is kept. */
function settingField(field: SettingField, values: ProviderFormValues, errors: FieldErrors, secretKept: boolean | undefined): Html {
  const value = values.settings[field.name];
  const text = typeof value === 'string' ? value : '';
  if (field.control === 'flag') return html`${checkbox(field.name, 'true', field.label, value === true, { id: field.name })}${errorsFor(errors, field.name)}`;
  if (field.control === 'textarea') return textArea(field.name, field.label, text, errors, field.max ?? 255);
  if (field.control === 'select') return selectField(field.name, field.label, text, field.options ?? [], errors, field.hint);
  if (field.control === 'secret') {
    const hint = secretKept === undefined ? undefined : secretKept ? 'One is kept: leave it empty to keep it.' : 'None is kept.';
    return textField(field.name, field.label, '', errors, { type: 'password', autocomplete: 'new-password', max: field.max, hint });
  }
  return textField(field.name, field.label, text, errors, { max: field.max, hint: field.hint });
}

/** A mapping row's roles: checkboxes by name, or the ids typed for a viewer who may not see roles. */
function rowRoles(index: number, row: MappingRow, choices: MappingChoices, errors: FieldErrors): Html {
  const name = rowField(index, 'role_ids');
  if (!choices.roleChoices) return rowText(name, 'Role ids (separated by spaces)', row.role_ids.join(' '), errors, 'roles', 1024);
  const ticked = new Set(row.role_ids);
  return html`<fieldset class="roles-picker"${errors[name] ? html` aria-describedby="${name}-error"` : ''}><legend>Roles</legend>
${choices.roleChoices.map((role) => checkbox(name, String(role.id), html`${role.label}${role.system ? html` <span class="badge system">system</span>` : ''}`, ticked.has(String(role.id)), { id: `${name}-${role.id}` }))}
${rowError(errors, name, 'roles')}
</fieldset>`;
}

/** A mapping row's user group: a list with *(none)*, or the id typed for a viewer who may not see groups. */
function rowUserGroup(index: number, row: MappingRow, choices: MappingChoices, errors: FieldErrors): Html {
  const name = rowField(index, 'user_group_id');
  if (!choices.userGroupChoices) return rowText(name, 'User group id (empty: none)', row.user_group_id, errors, 'user group', 10);
  const option = (id: string, label: string) => html`<option value="${id}"${row.user_group_id === id ? html` selected` : ''}>${label}</option>`;
  return html`<label for="${name}">User group</label><select id="${name}" name="${name}"${invalidOf(errors, name)}>${option('', '(none)')}${choices.userGroupChoices.map((g) => option(String(g.id), g.label))}</select>${rowError(errors, name, 'user group')}`;
}

function mappingRows(values: ProviderFormValues, choices: MappingChoices, errors: FieldErrors): Html {
  const rows = [...values.mappings, ...Array.from({ length: BLANK_ROWS }, (): MappingRow => ({ group: '', role_ids: [], user_group_id: '' }))];
  return html`<fieldset class="mappings"><legend>Mappings</legend>
<p class="hint">At every sign-in, a person in a row's group (its name or its full DN) gets the row's roles and user group; a person in no row's group gets the role user. A row with no group is left out; save to get more empty rows.</p>
<input type="hidden" name="mapping_rows" value="${rows.length}">
${errorsFor(errors, 'mappings')}
${rows.map((row, index) => html`<fieldset class="mapping"><legend>Mapping ${index + 1}</legend>
${rowText(rowField(index, 'group'), 'Group', row.group, errors, 'group', 1024)}
${rowRoles(index, row, choices, errors)}
${rowUserGroup(index, row, choices, errors)}
${index < values.mappings.length ? checkbox(rowField(index, 'remove'), '1', 'Remove this mapping', false, { id: rowField(index, 'remove') }) : ''}
</fieldset>`)}
</fieldset>`;
}

/** The fields of a provider's form, new or kept (`secretsKept`: whether each secret is set, for a kept one). */
function providerFields(kind: ProviderKind, values: ProviderFormValues, choices: MappingChoices, errors: FieldErrors, secretsKept?: Record<string, boolean>): Html {
  return html`${textField('label', 'Label (the sign-in button says "Sign in with" it)', values.label, errors, { required: true })}
${checkbox('jit_provisioning', 'true', 'Make the account at the first sign-in (just-in-time)', values.jit_provisioning, { id: 'jit_provisioning' })}${errorsFor(errors, 'jit_provisioning')}
<fieldset class="settings"><legend>${KIND_NAMES[kind]} settings</legend>
${errorsFor(errors, 'settings')}
${SETTING_FIELDS[kind].map((field) => settingField(field, values, errors, secretsKept?.[field.name]))}
</fieldset>
${mappingRows(values, choices, errors)}`;
}

function refusals(messages: string[]): Html {
  return messages.length > 0 ? html`<div class="error" role="alert">${messages.map((m) => html`<p>${m}</p>`)}</div>` : html``;
}

export interface ProvidersListView {
  providers: IdentityProvider[];
  total: number;
  notice?: string;
}

/** The identity providers (docs/console.md#identity-providers): label, kind, enabled, JIT; a new one by kind. */
export function providersListPage(context: PageContext, view: ProvidersListView): Html {
  return page(context, 'Identity providers', html`<h1>Identity providers</h1>
<p>People sign in to cmi through these: OpenID Connect and SAML providers as buttons on the sign-in page, LDAP directories on its ordinary form (<a href="/docs">API reference</a>).</p>
${mayChangeProviders(context.viewer) ? html`<p>New provider: ${PROVIDER_KINDS.map((kind, i) => html`${i > 0 ? ' · ' : ''}<a class="button" href="/console/identity-providers/new?kind=${kind}">${KIND_NAMES[kind]}</a>`)}</p>` : ''}
<p class="total">${view.total} ${view.total === 1 ? 'provider' : 'providers'}</p>
${view.providers.length === 0 ? html`<p class="empty">No identity providers yet.</p>` : html`<div class="scroll"><table class="identity-providers">
<thead><tr><th scope="col">Label</th><th scope="col">Kind</th><th scope="col">Enabled</th><th scope="col">Just-in-time accounts</th><th scope="col" class="number">Mappings</th><th scope="col">Updated</th></tr></thead>
<tbody>${view.providers.map((p) => html`<tr>
<td><a href="/console/identity-providers/${p.id}">${p.label}</a></td><td>${KIND_NAMES[p.kind]}</td><td>${p.enabled ? 'yes' : 'no'}</td><td>${p.jit_provisioning ? 'yes' : 'no'}</td>
<td class="number">${p.mappings.length}</td><td>${ago(p.updated_at, context.now)}</td></tr>`)}</tbody>
</table></div>`}`, view.notice ? html`${view.notice}` : undefined);
}

/** The kind picker of a new provider: one form per kind. */
export function pickKindPage(context: PageContext): Html {
  return page(context, 'New identity provider', html`<p class="crumbs"><a href="/console/identity-providers">← Identity providers</a></p>
<h1>New identity provider</h1>
<p>What does the provider speak?</p>
<ul>${PROVIDER_KINDS.map((kind) => html`<li><a href="/console/identity-providers/new?kind=${kind}">${KIND_NAMES[kind]}</a></li>`)}</ul>`);
}

/** A new provider of `kind`: its settings, mappings and flags (errors of a 422 beside their fields). */
export function newProviderPage(context: PageContext, kind: ProviderKind, values: ProviderFormValues, choices: MappingChoices, errors: FieldErrors): Html {
  const { local, rest } = formErrors(kind, errors, values.mappings.length);
  return page(context, `New ${KIND_NAMES[kind]} provider`, html`<p class="crumbs"><a href="/console/identity-providers">← Identity providers</a></p>
<h1>New ${KIND_NAMES[kind]} provider</h1>
${refusals(rest)}
<form method="post" action="/console/identity-providers" class="stacked wide">${csrfField(context.csrf)}
<input type="hidden" name="kind" value="${kind}">
${checkbox('enabled', 'true', 'Enabled (offered at sign-in)', values.enabled, { id: 'enabled' })}${errorsFor(local, 'enabled')}
${providerFields(kind, values, choices, local)}
<button type="submit">Create provider</button>
</form>`);
}

/** A copyable URL to register at the provider. */
function urlField(id: string, label: string, url: string): Html {
  return html`<dt>${label}</dt><dd><input id="${id}" readonly value="${url}" aria-label="${label}" size="70"> <button type="button" data-copy="${id}">Copy</button> <span class="copied" role="status" data-copied-for="${id}"></span></dd>`;
}

/** What the provider must be told of cmi, by kind (docs/console.md#identity-providers). */
export function registrationUrls(kind: ProviderKind, id: number, base: string): Array<[label: string, url: string]> {
  const at = `${base}/console/sso/${id}`;
  if (kind === 'oidc') return [['Redirect URI', `${at}/callback`]];
  if (kind === 'saml') return [['Service provider metadata (its entity id)', `${at}/metadata`], ['Assertion consumer service (HTTP-POST)', `${at}/acs`]];
  return [];
}

export interface ProviderView {
  provider: IdentityProvider;
  /** Where this cmi is reached (CMI_PUBLIC_URL, else the request's): the URLs to register start with it. */
  base: string;
  values: ProviderFormValues;
  choices: MappingChoices;
  errors: FieldErrors;
  notice?: string;
}

function settingShown(field: SettingField, shown: Record<string, unknown>, secretKept: boolean): Html {
  const value = shown[field.name];
  if (field.control === 'secret') return html`${secretKept ? 'set (never shown)' : html`<span class="muted">not set</span>`}`;
  if (typeof value === 'boolean') return html`${value ? 'yes' : 'no'}`;
  if (Array.isArray(value)) return html`${value.join(' ')}`;
  if (typeof value !== 'string' || value === '') return html`<span class="muted">-</span>`;
  return field.control === 'textarea' ? html`<pre><code>${value}</code></pre>` : html`<code>${value}</code>`;
}

/** The mappings as read: roles and user groups by name where the viewer may see them, else by id. */
function mappingsShown(provider: IdentityProvider, choices: MappingChoices): Html {
  if (provider.mappings.length === 0) return html`<p class="empty">No mappings: everyone signing in gets the role user.</p>`;
  const role = new Map((choices.roleChoices ?? []).map((r) => [r.id, r.label]));
  const group = new Map((choices.userGroupChoices ?? []).map((g) => [g.id, g.label]));
  return html`<div class="scroll"><table class="mappings">
<thead><tr><th scope="col">Group</th><th scope="col">Roles</th><th scope="col">User group</th></tr></thead>
<tbody>${provider.mappings.map((m) => html`<tr><td><code>${m.group}</code></td><td>${m.role_ids.length === 0 ? html`<span class="muted">none</span>` : m.role_ids.map((id) => role.get(id) ?? `#${id}`).join(', ')}</td>
<td>${m.user_group_id === null ? html`<span class="muted">none</span>` : group.get(m.user_group_id) ?? `#${m.user_group_id}`}</td></tr>`)}</tbody>
</table></div>`;
}

/** One provider: its settings (secrets never), the URLs to register at it, its mappings; for managers the edit form and actions. */
export function providerPage(context: PageContext, view: ProviderView): Html {
  const { provider } = view;
  const manage = mayChangeProviders(context.viewer);
  const shown = shownSettings(provider);
  const kept = Object.fromEntries(SECRET_SETTINGS[provider.kind].map((name) => [name, ((provider.settings as unknown as Record<string, unknown>)[name] ?? '') !== '']));
  const urls = registrationUrls(provider.kind, provider.id, view.base);
  const { local, rest } = formErrors(provider.kind, view.errors, view.values.mappings.length);
  return page(context, provider.label, html`<p class="crumbs"><a href="/console/identity-providers">← Identity providers</a></p>
<h1>${provider.label}</h1>
<dl class="fields">
<dt>Kind</dt><dd>${KIND_NAMES[provider.kind]}</dd>
<dt>Enabled</dt><dd>${provider.enabled ? 'yes' : 'no (not offered at sign-in)'}</dd>
<dt>Just-in-time accounts</dt><dd>${provider.jit_provisioning ? 'yes: an account is made at the first sign-in' : 'no: only people with an account linked or matching can sign in'}</dd>
<dt>Created</dt><dd>${datetime(provider.created_at)}</dd>
<dt>Updated</dt><dd>${datetime(provider.updated_at)}</dd>
</dl>
<section aria-labelledby="register-heading">
<h2 id="register-heading">Register cmi at the provider</h2>
${urls.length === 0 ? html`<p>An LDAP directory needs nothing of cmi: its users sign in with the ordinary sign-in form.</p>` : html`<dl class="fields">${urls.map(([label, url], i) => urlField(`sso-url-${i}`, label, url))}</dl>`}
</section>
<section aria-labelledby="settings-heading">
<h2 id="settings-heading">Settings</h2>
<dl class="fields">${SETTING_FIELDS[provider.kind].map((field) => html`<dt>${field.label}</dt><dd>${settingShown(field, shown, kept[field.name] ?? false)}</dd>`)}</dl>
<h3>Mappings</h3>
${mappingsShown(provider, view.choices)}
</section>
${manage ? html`<div class="actions">
<form method="post" action="/console/identity-providers/${provider.id}/${provider.enabled ? 'disable' : 'enable'}">${csrfField(context.csrf)}<button type="submit">${provider.enabled ? 'Disable' : 'Enable'}</button></form>
<a class="button danger" href="/console/identity-providers/${provider.id}/delete">Delete…</a>
</div>
<section aria-labelledby="edit-heading">
<h2 id="edit-heading">Edit</h2>
${refusals(rest)}
<form method="post" action="/console/identity-providers/${provider.id}" class="stacked wide">${csrfField(context.csrf)}
${providerFields(provider.kind, view.values, view.choices, local, kept)}
<button type="submit">Save</button>
</form>
</section>` : ''}`, view.notice ? html`${view.notice}` : undefined);
}

/** Asks before deleting a provider, saying what becomes of its accounts. */
export function confirmDeleteProviderPage(context: PageContext, provider: IdentityProvider): Html {
  return page(context, 'Delete identity provider', html`<h1>Delete ${provider.label}?</h1>
<p>Nobody signs in through it any more. The accounts it made or linked stay, unlinked: they sign in only with a cmi password or an API key, if they have one.</p>
<form method="post" action="/console/identity-providers/${provider.id}/delete">${csrfField(context.csrf)}
<button type="submit" class="danger">Delete</button> <a href="/console/identity-providers/${provider.id}">Cancel</a></form>`);
}
