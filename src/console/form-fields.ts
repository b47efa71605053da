import type { Bucket } from '../buckets/bucket.js';
import type { Role } from '../roles/role.js';
import { html, type Html } from './html.js';

/** The API's field errors of a 422, by field (`base`: the record as a whole). */
export type FieldErrors = Record<string, string[]>;

export function errorsFor(errors: FieldErrors, name: string): Html {
  const messages = errors[name];
  return messages ? html`<span class="field-error" id="${name}-error">${name.replaceAll('_', ' ')} ${messages.join('; ')}</span>` : html``;
}

export interface TextFieldAttributes {
  type?: string;
  required?: boolean;
  autocomplete?: string;
  max?: number;
  readonly?: boolean;
  hint?: string;
}

/** A labelled input with its value and, after a 422, its messages (tied to it for screen readers). */
export function textField(name: string, label: string, value: string | undefined, errors: FieldErrors, attributes: TextFieldAttributes = {}): Html {
  const invalid = errors[name] ? html` aria-invalid="true" aria-describedby="${name}-error"` : attributes.hint ? html` aria-describedby="${name}-hint"` : '';
  return html`<label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="${attributes.type ?? 'text'}" maxlength="${attributes.max ?? 255}"${attributes.required ? html` required` : ''}${attributes.readonly ? html` readonly` : ''}${attributes.autocomplete ? html` autocomplete="${attributes.autocomplete}"` : ''} value="${value ?? ''}"${invalid}>
${attributes.hint ? html`<span class="hint" id="${name}-hint">${attributes.hint}</span>` : ''}
${errorsFor(errors, name)}`;
}

/** A checkbox with its label after it. */
export function checkbox(name: string, value: string, label: string | Html, checked: boolean, attributes: { id?: string; disabled?: boolean } = {}): Html {
  const id = attributes.id ?? `${name}-${value}`;
  return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="${name}" value="${value}"${checked ? html` checked` : ''}${attributes.disabled ? html` disabled` : ''}> <span>${label}</span></label>`;
}

/** The messages about the record as a whole. */
export function baseErrors(errors: FieldErrors): Html {
  return errors.base ? html`<p class="error" role="alert">${errors.base.join(' ')}</p>` : html``;
}

/** A role a user or a group may be given, as the picker shows it. */
export type RoleChoice = Pick<Role, 'id' | 'label' | 'system'>;
/** A bucket a user or a group may be put in. */
export type BucketChoice = Pick<Bucket, 'id' | 'label'>;

/** The role picker (users' and groups' forms): one checkbox a role; `role_picker` says the form had it, so none ticked is none. */
export function rolesPicker(choices: readonly RoleChoice[], selected: readonly number[] | undefined, errors: FieldErrors): Html {
  const ticked = new Set(selected ?? []);
  return html`<fieldset class="roles-picker"${errors.role_ids ? html` aria-describedby="role_ids-error"` : ''}><legend>Roles</legend>
<input type="hidden" name="role_picker" value="1">
${choices.map((role) => checkbox('role_ids', String(role.id), html`${role.label}${role.system ? html` <span class="badge system">system</span>` : ''}`, ticked.has(role.id), { id: `role-${role.id}` }))}
${errorsFor(errors, 'role_ids')}
</fieldset>`;
}

/** The bucket picker (none, or one of the buckets). */
export function bucketPicker(choices: readonly BucketChoice[], value: string | undefined, errors: FieldErrors): Html {
  const option = (id: string, label: string) => html`<option value="${id}"${(value ?? '') === id ? html` selected` : ''}>${label}</option>`;
  return html`<label for="bucket_id">Billing bucket</label><select id="bucket_id" name="bucket_id">${option('', '(none)')}${choices.map((b) => option(String(b.id), b.label))}</select>${errorsFor(errors, 'bucket_id')}`;
}

/**
 * The viewer's own current password, which a form that changes a login, email or password or makes an
 * API key needs through the console's session as through the API's (docs/security.md#self-service).
 * Several forms of a page carry it, so each has its own id (`<form>-current_password`).
 */
export function currentPasswordField(form: string, errors: FieldErrors, { required, hint }: { required: boolean; hint?: string }): Html {
  const id = `${form}-current_password`;
  const messages = errors.current_password;
  const described = messages ? html` aria-invalid="true" aria-describedby="${id}-error"` : hint ? html` aria-describedby="${id}-hint"` : '';
  return html`<label for="${id}">Your current password</label>
<input id="${id}" name="current_password" type="password" maxlength="1024"${required ? html` required` : ''} autocomplete="current-password" value=""${described}>
${hint ? html`<span class="hint" id="${id}-hint">${hint}</span>` : ''}
${messages ? html`<span class="field-error" id="${id}-error">current password ${messages.join('; ')}</span>` : ''}`;
}
