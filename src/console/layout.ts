import type { User } from '../users/user.js';
import { formatDatetime } from '../http/render/datetime.js';
import { CSRF_FIELD } from './console-session.js';
import { may } from '../roles/authorization.js';
import { html, type Html } from './html.js';

/** What every signed-in page knows: who is looking, and the token its forms carry. */
export interface PageContext {
  viewer: User;
  csrf: string;
  now: Date;
}

/** The hidden field that carries the CSRF token in every form that POSTs. */
export const csrfField = (csrf: string): Html => html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">`;

/** "3 min ago", with the exact time on hover and for machines. */
export function ago(at: Date, now: Date): Html {
  const seconds = Math.max(0, Math.round((now.getTime() - at.getTime()) / 1000));
  const text = seconds < 60 ? `${seconds} s ago`
    : seconds < 3600 ? `${Math.floor(seconds / 60)} min ago`
    : seconds < 86_400 ? `${Math.floor(seconds / 3600)} h ago`
    : `${Math.floor(seconds / 86_400)} d ago`;
  const exact = formatDatetime(at);
  return html`<time datetime="${exact}" title="${exact}">${text}</time>`;
}

export function datetime(at: Date | null): Html {
  if (at === null) return html`<span class="muted">never</span>`;
  const exact = formatDatetime(at);
  return html`<time datetime="${exact}">${exact}</time>`;
}

function document(title: string, body: Html): Html {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · cmi console</title>
<link rel="icon" href="/console/assets/favicon" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/console-css">
<script type="module" src="/console/assets/console-js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${body}
</body>
</html>
`;
}

/** Whether the overview has a part for `viewer` (docs/console.md#overview): the errors, or the failing alert deliveries. */
export const seesOverview = (viewer: User): boolean =>
  may(viewer, 'infrastructure_errors.read') || (may(viewer, 'webhook_deliveries.read') && may(viewer, 'alert_destinations.read'));

/** A page of a signed-in user: the navigation, an optional notice, and the content. */
export function page(context: PageContext, title: string, content: Html, notice?: Html): Html {
  const { viewer, csrf } = context;
  return document(title, html`<header class="top">
<nav aria-label="Console">
<a class="brand" href="/console">cmi</a>
${seesOverview(viewer) ? html`<a href="/console/overview">Overview</a>` : ''}
${may(viewer, 'infrastructure_errors.read') ? html`<a href="/console/errors">Errors</a>` : ''}
<a href="/console/users">${may(viewer, 'users.read') ? 'Users' : 'My account'}</a>
${may(viewer, 'roles.read') ? html`<a href="/console/roles">Roles</a>` : ''}
${may(viewer, 'buckets.read') ? html`<a href="/console/buckets">Buckets</a>` : ''}
${may(viewer, 'user_groups.read') ? html`<a href="/console/groups">Groups</a>` : ''}
${may(viewer, 'ingest_keys.read') ? html`<a href="/console/ingest-keys">Ingest keys</a>` : ''}
${may(viewer, 'infrastructure_errors.read') ? html`<a href="/console/sources">Log sources</a>` : ''}
${may(viewer, 'audit_log.read') ? html`<a href="/console/audit">Audit log</a>` : ''}
${may(viewer, 'alert_destinations.read') && may(viewer, 'alert_rules.read') ? html`<a href="/console/alerts">Alerts</a>` : ''}
${may(viewer, 'identity_providers.read') ? html`<a href="/console/identity-providers">Identity providers</a>` : ''}
${may(viewer, 'password_policy.manage') ? html`<a href="/console/settings/password-policy">Password policy</a>` : ''}
</nav>
<form method="post" action="/console/sign-out" class="sign-out">${csrfField(csrf)}<span class="who">${viewer.login}</span> <button type="submit">Sign out</button></form>
</header>
<main id="main">
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${content}
</main>`);
}

/** A page without a session: sign-in, and the answers given before one exists. */
export function bare(title: string, content: Html): Html {
  return document(title, html`<main id="main" class="narrow">${content}</main>`);
}

/** A failure the user should see, with the request id to quote. */
export function problem(heading: string, messages: string[], requestId: string): Html {
  return html`<h1>${heading}</h1>
<div class="error" role="alert">${messages.map((m) => html`<p>${m}</p>`)}</div>
<p class="muted">Request id: <code>${requestId}</code></p>`;
}
