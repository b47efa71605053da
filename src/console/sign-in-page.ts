import { html, type Html } from './html.js';
import { bare } from './layout.js';

export interface SignInView {
  next: string;
  login?: string;
  notice?: string;
  failure?: string;
  /** The identity providers to sign in with (OpenID Connect and SAML, enabled): a button each. */
  providers?: ReadonlyArray<{ id: number; label: string }>;
}

/**
 * The page after a sign-in that came back from another site (the sign-in form of another site, an
 * identity provider): signed in, it goes on to `next` by itself, a same-site navigation.
 */
export function signedInPage(next = '/console'): Html {
  return bare('Signed in', html`<meta http-equiv="refresh" content="0; url=${next}">
<h1>Signed in</h1>
<p class="notice" role="status">You are signed in. <a href="${next}">Go on to the console</a>.</p>`);
}

/**
 * The page that posts a SAML AuthnRequest to an identity provider (its HTTP-POST binding): the console's
 * script submits the form at once; without script, its button does.
 */
export function postToProviderPage(action: string, fields: Readonly<Record<string, string>>): Html {
  return bare('Signing in', html`<h1>Signing in</h1>
<form method="post" action="${action}" data-submit-at-once>
${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<p>On to the identity provider… <button type="submit">Continue</button></p>
</form>`);
}

/** The sign-in form: login or email, and password. */
export function signInPage({ next, login = '', notice, failure, providers = [] }: SignInView): Html {
  const buttons = providers.length === 0 ? '' : html`<ul class="sso-providers">${providers.map(({ id, label }) =>
    html`<li><a class="button" href="/console/sso/${String(id)}/start?next=${encodeURIComponent(next)}">Sign in with ${label}</a></li>`)}</ul>
<p class="sso-or">or with a cmi account</p>`;
  return bare('Sign in', html`<h1>Sign in to cmi</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${failure ? html`<p class="error" role="alert">${failure}</p>` : ''}
${buttons}
<form method="post" action="/console/sign-in" class="stacked">
<input type="hidden" name="next" value="${next}">
<label for="login">Login or email</label>
<input id="login" name="login" autocomplete="username" required maxlength="254" value="${login}" autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024">
<button type="submit">Sign in</button>
</form>`);
}

export interface SecondFactorView {
  next: string;
  /** The "password verified" token (users/second-factor-token.ts), carried by the form, never a cookie. */
  token: string;
  failure?: string;
}

/** The sign-in's second step: the code of the authenticator app, or a recovery code (docs/security.md#second-factor). */
export function secondFactorPage({ next, token, failure }: SecondFactorView): Html {
  return bare('Second factor', html`<h1>Second factor</h1>
${failure ? html`<p class="error" role="alert">${failure}</p>` : ''}
<form method="post" action="/console/sign-in/code" class="stacked">
<input type="hidden" name="next" value="${next}">
<input type="hidden" name="token" value="${token}">
<label for="code">Code of your authenticator app, or a recovery code</label>
<input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required maxlength="64" autofocus>
<button type="submit">Verify</button>
</form>`);
}
