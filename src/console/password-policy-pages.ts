import type { PasswordPolicy } from '../users/password-policy.js';
import { baseErrors, checkbox, errorsFor, type FieldErrors, textField } from './form-fields.js';
import { html, type Html } from './html.js';
import { csrfField, page, type PageContext } from './layout.js';

/** The policy's fields as the form holds them (the numbers as typed, after a 422). */
export type PasswordPolicyFormValues = Record<string, string | boolean>;

export const POLICY_FLAGS = [
  ['require_upper', 'An upper-case letter'],
  ['require_lower', 'A lower-case letter'],
  ['require_digit', 'A digit'],
  ['require_symbol', 'A symbol (neither a letter nor a digit)'],
] as const;

export const POLICY_NUMBERS = [
  ['min_length', 'Minimum length', 'Characters, 8 to 128.'],
  ['history', 'History', 'A new password may not be one of the last this many (0 to 24; 0: any).'],
  ['expiry_months', 'Expiry, in months', 'After this many months a password signs in only to change itself (0: never). API keys are not affected.'],
  ['lockout_attempts', 'Lockout: failed logins', 'Failed logins allowed for one login from one address within the window.'],
  ['lockout_minutes', 'Lockout: window, in minutes', '1 to 1440.'],
] as const;

export const policyValues = (policy: PasswordPolicy): PasswordPolicyFormValues =>
  Object.fromEntries(Object.entries(policy).map(([name, value]) => [name, typeof value === 'number' ? String(value) : value]));

/** The password policy (docs/console.md#password-policy): its fields, and the form that changes them. */
export function passwordPolicyPage(context: PageContext, values: PasswordPolicyFormValues, errors: FieldErrors, notice?: string): Html {
  return page(context, 'Password policy', html`<h1>Password policy</h1>
<p class="hint">Every new password is held to it: on a new user, an edit, and every change. It governs every server on this database within a second.</p>
${baseErrors(errors)}
<form method="post" action="/console/settings/password-policy" class="stacked">${csrfField(context.csrf)}
${POLICY_NUMBERS.map(([name, label, hint]) => textField(name, label, String(values[name] ?? ''), errors, { required: true, max: 9, hint }))}
<fieldset class="flags"><legend>A new password holds</legend>
${POLICY_FLAGS.map(([name, label]) => html`${checkbox(name, 'true', label, values[name] === true, { id: name })}${errorsFor(errors, name)}`)}
</fieldset>
<button type="submit">Save</button>
</form>`, notice ? html`${notice}` : undefined);
}
