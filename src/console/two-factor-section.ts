import type { User } from '../users/user.js';
import type { TwoFactorEnrolment, TwoFactorStatus } from '../users/two-factor.service.js';
import { baseErrors, currentPasswordField, type FieldErrors, textField } from './form-fields.js';
import { html, type Html } from './html.js';
import { csrfField, datetime, page, type PageContext } from './layout.js';
import { qrCodeSvg } from './qr-code.js';

/** The code field of the confirm and turn-off forms: what an authenticator app shows, or a recovery code. */
function codeField(errors: FieldErrors, label: string): Html {
  return textField('code', label, undefined, errors, { required: true, max: 64, autocomplete: 'one-time-code' });
}

/**
 * The user's second factor on its page (docs/console.md#second-factor): whether it is on, since when and
 * how many recovery codes are left; for the user itself a form setting one up (with its current password,
 * as the API asks through a session) or turning it off with a current code; for a holder of users.update
 * looking at someone else's, a button turning it off.
 */
export function twoFactorSection(context: PageContext, user: User, status: TwoFactorStatus, mayTurnOff: boolean, errors: FieldErrors): Html {
  const own = context.viewer.id === user.id;
  const action = (path: string) => `/console/users/${user.id}/two-factor${path}`;
  return html`<section aria-labelledby="two-factor-heading">
<h2 id="two-factor-heading">Second factor</h2>
${status.enabled
    ? html`<p>On since ${datetime(status.confirmed_at)}: signing in to the console asks for a code of the authenticator app after the password. ${status.recovery_codes_left} recovery code${status.recovery_codes_left === 1 ? '' : 's'} left.</p>`
    : html`<p class="muted">Off: the password alone signs in.</p>`}
${baseErrors(errors)}
${own && !status.enabled ? html`<form method="post" action="${action('')}" class="stacked">${csrfField(context.csrf)}
${currentPasswordField('two-factor', errors, { required: true })}
<button type="submit">Set up a second factor</button>
</form>` : ''}
${own && status.enabled ? html`<form method="post" action="${action('/disable')}" class="stacked">${csrfField(context.csrf)}
${codeField(errors, 'Code of your authenticator app, or a recovery code')}
<button type="submit" class="danger">Turn off the second factor</button>
</form>` : ''}
${!own && status.enabled && mayTurnOff ? html`<form method="post" action="${action('/disable')}">${csrfField(context.csrf)}<button type="submit" class="danger">Turn off ${user.login}'s second factor</button></form>` : ''}
</section>`;
}

/**
 * The enrolment (docs/console.md#second-factor): the authenticator's QR code, the secret for typing in,
 * the recovery codes, and the form confirming with a first code. Shown once, in the answer to the POST
 * that made them (never cached); a wrong code answers the form again without them, since the secret is
 * never shown twice, and the user's page can always start anew.
 */
export function twoFactorEnrolmentPage(context: PageContext, user: User, enrolment: TwoFactorEnrolment | undefined, errors: FieldErrors): Html {
  const codes = enrolment === undefined ? [] : (JSON.parse(enrolment.recovery_codes) as string[]);
  return page(context, 'Set up a second factor', html`<p class="crumbs"><a href="/console/users/${user.id}">← ${user.login}</a></p>
<h1>Set up a second factor</h1>
${enrolment === undefined ? html`<p>Enter the code your authenticator app shows now for cmi. To see the QR code again, <a href="/console/users/${user.id}">start anew</a>: the secret is shown only once.</p>` : html`<section class="enrolment" aria-labelledby="scan-heading">
<h2 id="scan-heading">1. Scan this with your authenticator app</h2>
${qrCodeSvg(enrolment.otpauth_uri, 'QR code of the second factor for the authenticator app')}
<p>Or type this key into it: <code id="totp-secret">${enrolment.secret.replace(/(.{4})/g, '$1 ').trim()}</code> (time-based, 6 digits, 30 seconds), or open <a href="${enrolment.otpauth_uri}">the otpauth link</a> on this device.</p>
<h2 id="codes-heading">2. Keep these recovery codes</h2>
<p>Each signs in once in place of a code, if the authenticator is lost. Store them now: they are shown only this once.</p>
<ol class="recovery-codes" aria-labelledby="codes-heading">${codes.map((code) => html`<li><code>${code}</code></li>`)}</ol>
</section>`}
<section aria-labelledby="confirm-heading">
<h2 id="confirm-heading">${enrolment === undefined ? 'Confirm' : '3. Confirm'}</h2>
${baseErrors(errors)}
<form method="post" action="/console/users/${user.id}/two-factor/confirm" class="stacked">${csrfField(context.csrf)}
${codeField(errors, 'Code of your authenticator app')}
<button type="submit">Turn on the second factor</button>
</form>
</section>`);
}
