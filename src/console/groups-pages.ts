import type { Bucket } from '../buckets/bucket.js';
import { may } from '../roles/authorization.js';
import type { Role } from '../roles/role.js';
import type { UserGroup } from '../user-groups/user-group.js';
import type { User } from '../users/user.js';
import { baseErrors, bucketPicker, type FieldErrors, rolesPicker, textField } from './form-fields.js';
import { html, type Html } from './html.js';
import { ago, csrfField, datetime, page, type PageContext } from './layout.js';

/** What a group's form holds, as typed (the ticked roles as ids, the bucket as the select sends it). */
export interface GroupFormValues {
  label?: string;
  identifier?: string;
  role_ids?: readonly number[];
  bucket_id?: string;
}

/** A role a group may be given, as the picker shows it. */
export type GroupRoleChoice = Pick<Role, 'id' | 'label' | 'system'>;
/** A bucket a group may be meant for. */
export type GroupBucketChoice = Pick<Bucket, 'id' | 'label'>;

/** What the viewer may pick from: absent when it may not see roles (or buckets), and then the form leaves them as they are. */
export interface GroupChoices {
  roleChoices?: readonly GroupRoleChoice[];
  bucketChoices?: readonly GroupBucketChoice[];
}

function groupFields(values: GroupFormValues, errors: FieldErrors, choices: GroupChoices, group?: UserGroup): Html {
  return html`${textField('label', 'Label', values.label, errors, { required: true })}
${textField('identifier', 'Identifier', values.identifier, errors, { max: 64, hint: group ? undefined : 'Optional: made from the label when left empty.' })}
${choices.roleChoices ? rolesPicker(choices.roleChoices, values.role_ids, errors) : ''}
${choices.bucketChoices ? bucketPicker(choices.bucketChoices, values.bucket_id, errors) : ''}`;
}

/** A group's bucket: its label (a link for those who may see buckets) when known, else its id. */
function bucketOf(context: PageContext, id: number | null, buckets: ReadonlyMap<number, string>): Html {
  if (id === null) return html`<span class="muted">none</span>`;
  const label = buckets.get(id);
  if (label === undefined) return html`#${id}`;
  return may(context.viewer, 'buckets.read') ? html`<a href="/console/buckets/${id}">${label}</a>` : html`${label}`;
}

/** The labels of a group's roles, each a link for those who may see roles. */
function rolesOf(context: PageContext, group: UserGroup): Html {
  if (group.roles.length === 0) return html`<span class="muted">none</span>`;
  const linked = may(context.viewer, 'roles.read');
  return html`<ul class="inline">${group.roles.map((role) => html`<li>${linked ? html`<a href="/console/roles/${role.id}">${role.label}</a>` : role.label}</li>`)}</ul>`;
}

export interface GroupsListView {
  groups: UserGroup[];
  total: number;
  page: number;
  perPage: number;
  /** The buckets' labels by id, for a viewer who may see buckets. */
  buckets: ReadonlyMap<number, string>;
  notice?: string;
}

export function groupsListPage(context: PageContext, view: GroupsListView): Html {
  const pages = Math.max(1, Math.ceil(view.total / view.perPage));
  const link = (n: number) => (n > 1 ? `/console/groups?page=${n}` : '/console/groups');
  return page(context, 'User groups', html`<h1>User groups</h1>
<p class="hint">A group's roles apply to its members, besides their own.</p>
${may(context.viewer, 'user_groups.create') ? html`<p><a class="button" href="/console/groups/new">New group</a></p>` : ''}
<p class="total">${view.total} ${view.total === 1 ? 'group' : 'groups'}</p>
${view.groups.length === 0 ? html`<p class="empty">No groups on this page.</p>` : html`<div class="scroll"><table class="groups">
<thead><tr><th scope="col">Label</th><th scope="col">Identifier</th><th scope="col">Roles</th><th scope="col">Billing bucket</th><th scope="col">Updated</th></tr></thead>
<tbody>${view.groups.map((g) => html`<tr>
<td><a href="/console/groups/${g.id}">${g.label}</a></td><td><code>${g.identifier}</code></td>
<td>${g.roles.map((r) => r.label).join(', ')}</td><td>${g.bucket_id === null ? '' : (view.buckets.get(g.bucket_id) ?? `#${g.bucket_id}`)}</td><td>${ago(g.updated_at, context.now)}</td></tr>`)}</tbody>
</table></div>`}
${pages > 1 || view.page > 1 ? html`<nav class="pager" aria-label="Pages">${view.page > 1 ? html`<a rel="prev" href="${link(view.page - 1)}">← Previous</a>` : ''}
<span>Page ${view.page} of ${pages}</span>${view.page < pages ? html`<a rel="next" href="${link(view.page + 1)}">Next →</a>` : ''}</nav>` : ''}`,
  view.notice ? html`${view.notice}` : undefined);
}

export function newGroupPage(context: PageContext, values: GroupFormValues, errors: FieldErrors, choices: GroupChoices): Html {
  return page(context, 'New group', html`<p class="crumbs"><a href="/console/groups">← User groups</a></p>
<h1>New group</h1>
${baseErrors(errors)}
<form method="post" action="/console/groups" class="stacked">${csrfField(context.csrf)}
${groupFields(values, errors, choices)}
<button type="submit">Create group</button>
</form>`);
}

export interface GroupView extends GroupChoices {
  group: UserGroup;
  values: GroupFormValues;
  errors: FieldErrors;
  /** The buckets' labels by id, for a viewer who may see buckets. */
  buckets: ReadonlyMap<number, string>;
  /** The first members and their number, for a viewer who may list users. */
  members?: { users: User[]; total: number };
  /** A refusal of an action (delete), shown above the record. */
  refusal?: string[];
  notice?: string;
}

/** One group: its record, roles and members, and for the holders of the permissions the edit form and delete. */
export function groupPage(context: PageContext, view: GroupView): Html {
  const { group, members } = view;
  return page(context, group.label, html`<p class="crumbs"><a href="/console/groups">← User groups</a></p>
<h1>${group.label}</h1>
${view.refusal ? html`<div class="error" role="alert">${view.refusal.map((m) => html`<p>${m}</p>`)}</div>` : ''}
<dl class="fields">
<dt>Identifier</dt><dd><code>${group.identifier}</code></dd>
<dt>Roles</dt><dd>${rolesOf(context, group)}</dd>
<dt>Billing bucket</dt><dd>${bucketOf(context, group.bucket_id, view.buckets)}</dd>
<dt>Created</dt><dd>${datetime(group.created_at)}</dd>
<dt>Updated</dt><dd>${datetime(group.updated_at)}</dd>
</dl>
${may(context.viewer, 'user_groups.delete') ? html`<div class="actions"><a class="button danger" href="/console/groups/${group.id}/delete">Delete…</a></div>` : ''}
${members ? html`<section aria-labelledby="members-heading">
<h2 id="members-heading">Members</h2>
<p class="total">${members.total} ${members.total === 1 ? 'member' : 'members'}</p>
${members.users.length === 0 ? '' : html`<ul class="members">${members.users.map((u) => html`<li><a href="/console/users/${u.id}">${u.login}</a> <span class="status status-${u.status}">${u.status}</span></li>`)}</ul>`}
${members.total > members.users.length && may(context.viewer, 'users.read') ? html`<p><a href="/console/users?user_group_id=${group.id}">All ${members.total} in the users list</a></p>` : ''}
</section>` : ''}
${may(context.viewer, 'user_groups.update') ? html`<section aria-labelledby="edit-heading">
<h2 id="edit-heading">Edit</h2>
${baseErrors(view.errors)}
<form method="post" action="/console/groups/${group.id}" class="stacked">${csrfField(context.csrf)}
${groupFields(view.values, view.errors, view, group)}
<button type="submit">Save</button>
</form>
</section>` : ''}`, view.notice ? html`${view.notice}` : undefined);
}

/** Asks before deleting a group; a group users belong to is refused by the service, said on the group's page. */
export function confirmDeleteGroupPage(context: PageContext, group: UserGroup): Html {
  return page(context, 'Delete group', html`<h1>Delete ${group.label}?</h1>
<p>The group goes for good. A group that users belong to cannot be deleted: move them out of it first.</p>
<form method="post" action="/console/groups/${group.id}/delete">${csrfField(context.csrf)}
<button type="submit" class="danger">Delete</button> <a href="/console/groups/${group.id}">Cancel</a></form>`);
}
