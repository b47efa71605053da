import { may } from '../roles/authorization.js';
import { ADMIN_ROLE_ID, PERMISSIONS } from '../roles/permissions.js';
import type { Role } from '../roles/role.js';
import { baseErrors, checkbox, errorsFor, type FieldErrors, textField } from './form-fields.js';
import { html, type Html } from './html.js';
import { ago, csrfField, datetime, page, type PageContext } from './layout.js';

/** What a role's form holds, as typed (the ticked permissions as ids). */
export interface RoleFormValues {
  label?: string;
  identifier?: string;
  permission_ids?: readonly number[];
}

/** A permission's area: what comes before its first dot (`users.read.own` is in `users`). */
const areaOf = (identifier: string) => identifier.split('.')[0] as string;

/** The catalogue by area, in its own order (src/roles/permissions.ts). */
function permissionAreas(): Array<[string, Array<(typeof PERMISSIONS)[number]>]> {
  const areas = new Map<string, Array<(typeof PERMISSIONS)[number]>>();
  for (const permission of PERMISSIONS) {
    const area = areaOf(permission[1]);
    areas.set(area, [...(areas.get(area) ?? []), permission]);
  }
  return [...areas];
}

/**
 * The permission picker: one fieldset per area (`users.*`, `roles.*` ...), a checkbox per permission
 * labelled from the catalogue, with an "all of the area" box the script ticks (docs/console.md#roles).
 * `fixed`: shown, ticked as held, and not sent (the admin role holds every permission).
 */
function permissionPicker(selected: ReadonlySet<number>, errors: FieldErrors, fixed = false): Html {
  return html`<div class="picker" role="group" aria-labelledby="permissions-heading"${errors.permission_ids ? html` aria-describedby="permission_ids-error"` : ''}>
<p id="permissions-heading" class="picker-heading">Permissions</p>
${fixed ? html`<p class="hint">The admin role holds every permission; they cannot be changed.</p>` : html`<input type="hidden" name="permission_picker" value="1">`}
${errorsFor(errors, 'permission_ids')}
${permissionAreas().map(([area, permissions]) => html`<fieldset class="area" data-area="${area}">
<legend>${area}.*${fixed ? '' : html` <label class="check all" for="all-${area}"><input type="checkbox" id="all-${area}" data-select-group aria-label="All of ${area}.*"> all</label>`}</legend>
${permissions.map(([id, identifier, label]) => checkbox('permission_ids', String(id), html`${label} <code>${identifier}</code>`, selected.has(id), { id: `permission-${id}`, disabled: fixed }))}
</fieldset>`)}
</div>`;
}

function roleFields(values: RoleFormValues, errors: FieldErrors, role?: Role): Html {
  const system = role?.system ?? false;
  return html`${textField('label', 'Label', values.label, errors, { required: true })}
${textField('identifier', 'Identifier', values.identifier, errors, {
    max: 64, readonly: system, hint: system ? 'A system role keeps its identifier.' : role ? undefined : 'Optional: made from the label when left empty.',
  })}
${permissionPicker(new Set(values.permission_ids ?? []), errors, role?.id === ADMIN_ROLE_ID)}`;
}

function systemBadge(role: Role): Html {
  return role.system ? html` <span class="badge system">system</span>` : html``;
}

export interface RolesListView {
  roles: Role[];
  total: number;
  page: number;
  perPage: number;
  notice?: string;
}

export function rolesListPage(context: PageContext, view: RolesListView): Html {
  const pages = Math.max(1, Math.ceil(view.total / view.perPage));
  const link = (n: number) => (n > 1 ? `/console/roles?page=${n}` : '/console/roles');
  return page(context, 'Roles', html`<h1>Roles</h1>
${may(context.viewer, 'roles.create') ? html`<p><a class="button" href="/console/roles/new">New role</a></p>` : ''}
<p class="total">${view.total} ${view.total === 1 ? 'role' : 'roles'}</p>
${view.roles.length === 0 ? html`<p class="empty">No roles on this page.</p>` : html`<div class="scroll"><table class="roles">
<thead><tr><th scope="col">Label</th><th scope="col">Identifier</th><th scope="col" class="number">Permissions</th><th scope="col" class="number">Users</th><th scope="col">Updated</th></tr></thead>
<tbody>${view.roles.map((r) => html`<tr>
<td><a href="/console/roles/${r.id}">${r.label}</a>${systemBadge(r)}</td><td><code>${r.identifier}</code></td>
<td class="number">${r.permissions.length}</td><td class="number">${r.users_count}</td><td>${ago(r.updated_at, context.now)}</td></tr>`)}</tbody>
</table></div>`}
${pages > 1 || view.page > 1 ? html`<nav class="pager" aria-label="Pages">${view.page > 1 ? html`<a rel="prev" href="${link(view.page - 1)}">← Previous</a>` : ''}
<span>Page ${view.page} of ${pages}</span>${view.page < pages ? html`<a rel="next" href="${link(view.page + 1)}">Next →</a>` : ''}</nav>` : ''}`,
  view.notice ? html`${view.notice}` : undefined);
}

export function newRolePage(context: PageContext, values: RoleFormValues, errors: FieldErrors): Html {
  return page(context, 'New role', html`<p class="crumbs"><a href="/console/roles">← Roles</a></p>
<h1>New role</h1>
${baseErrors(errors)}
<form method="post" action="/console/roles" class="stacked wide">${csrfField(context.csrf)}
${roleFields(values, errors)}
<button type="submit">Create role</button>
</form>`);
}

export interface RoleView {
  role: Role;
  values: RoleFormValues;
  errors: FieldErrors;
  /** A refusal of an action (delete), shown above the record. */
  refusal?: string[];
  notice?: string;
}

/** One role: its record and permissions, and for the holders of the permissions the edit form and actions. */
export function rolePage(context: PageContext, view: RoleView): Html {
  const { role } = view;
  const may_ = (permission: 'roles.create' | 'roles.update' | 'roles.delete') => may(context.viewer, permission);
  const held = new Set(role.permissions.map((p) => p.identifier));
  return page(context, role.label, html`<p class="crumbs"><a href="/console/roles">← Roles</a></p>
<h1>${role.label}${systemBadge(role)}</h1>
${view.refusal ? html`<div class="error" role="alert">${view.refusal.map((m) => html`<p>${m}</p>`)}</div>` : ''}
<dl class="fields">
<dt>Identifier</dt><dd><code>${role.identifier}</code></dd>
<dt>Kind</dt><dd>${role.system ? 'System role: present from the start, never deleted, its identifier fixed' : 'Custom role'}</dd>
<dt>Users</dt><dd>${role.users_count}</dd>
<dt>Created</dt><dd>${datetime(role.created_at)}</dd>
<dt>Updated</dt><dd>${datetime(role.updated_at)}</dd>
</dl>
<div class="actions">
${may_('roles.create') ? html`<form method="post" action="/console/roles/${role.id}/clone">${csrfField(context.csrf)}<button type="submit">Clone</button></form>` : ''}
${may_('roles.delete') && !role.system ? html`<a class="button danger" href="/console/roles/${role.id}/delete">Delete…</a>` : ''}
${may_('roles.delete') && role.system ? html`<span class="muted">A system role cannot be deleted.</span>` : ''}
</div>
${may_('roles.update') ? html`<section aria-labelledby="edit-heading">
<h2 id="edit-heading">Edit</h2>
${baseErrors(view.errors)}
<form method="post" action="/console/roles/${role.id}" class="stacked wide">${csrfField(context.csrf)}
${roleFields(view.values, view.errors, role)}
<button type="submit">Save</button>
</form>
</section>` : html`<section aria-labelledby="permissions-list-heading">
<h2 id="permissions-list-heading">Permissions</h2>
${role.permissions.length === 0 ? html`<p class="empty">This role grants no permission.</p>` : html`<ul class="permissions">${PERMISSIONS.filter(([, identifier]) => held.has(identifier)).map(([, identifier, label]) => html`<li>${label} <code>${identifier}</code></li>`)}</ul>`}
</section>`}`, view.notice ? html`${view.notice}` : undefined);
}

/** Asks before deleting a role; says at once when the API would refuse (users hold it). */
export function confirmDeleteRolePage(context: PageContext, role: Role): Html {
  return page(context, 'Delete role', html`<h1>Delete ${role.label}?</h1>
${role.users_count > 0 ? html`<p class="error" role="alert">${role.users_count} ${role.users_count === 1 ? 'user holds' : 'users hold'} this role: a role that users hold cannot be deleted. Take it from them first.</p>` : html`<p>The role goes for good.</p>`}
<form method="post" action="/console/roles/${role.id}/delete">${csrfField(context.csrf)}
<button type="submit" class="danger">Delete</button> <a href="/console/roles/${role.id}">Cancel</a></form>`);
}
