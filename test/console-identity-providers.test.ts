import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { type Browser, chromium } from 'playwright-core';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';

// The console's identity providers pages (docs/console.md#identity-providers), through app.inject(),
// and once in Debian's Chromium (playwright-core) against a real cmi on a free port of 127.0.0.1.

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const CONSOLE_COOKIE = /^_cmi_console=([^;\s]+);/;
const BASE = 'https://cmi.example.com';

/** Secrets typed into the forms: none may ever be in a page. */
const OIDC_SECRET = 'oidc-Secret-4f7a9c';
const LDAP_SECRET = 'ldap-Secret-b81d2e';
const TYPED_SECRET = 'typed-Secret-19c0aa';
const NEW_SECRET = 'new-Secret-77e3f1';
const SECRETS = [OIDC_SECRET, LDAP_SECRET, TYPED_SECRET, NEW_SECRET];

const csrfOf = (body: string): string => /name="_csrf" value="([^"]+)"/.exec(body)![1]!;

interface Row {
  kind: string;
  label: string;
  enabled: number;
  jit_provisioning: number;
  settings: Record<string, unknown>;
  mappings: unknown[];
}

describe('the console\'s identity providers', () => {
  let t: TestApp;
  /** Every HTML page answered, to look for secrets in. */
  let pages: string[];
  beforeEach(async () => {
    t = await createTestApp({ CMI_PUBLIC_URL: BASE });
    pages = [];
  });
  afterEach(() => {
    for (const body of pages) for (const secret of SECRETS) assert.ok(!body.includes(secret), `a secret in a page: ${secret}`);
    return t.close();
  });

  const seen = (res: LightMyRequestResponse) => {
    if (String(res.headers['content-type']).startsWith('text/html')) pages.push(res.body);
    return res;
  };

  async function session(login = ADMIN.login, password = ADMIN.password): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: new URLSearchParams({ login, password }).toString() });
    assert.equal(res.statusCode, 303, res.body);
    return `_cmi_console=${CONSOLE_COOKIE.exec(String(res.headers['set-cookie']))![1]}`;
  }
  const get = async (cookie: string, url: string) => seen(await t.app.inject({ method: 'GET', url, headers: { cookie } }));
  const post = async (cookie: string, csrf: string | undefined, url: string, pairs: Array<[string, string]> = []) => seen(await t.app.inject({
    method: 'POST', url, headers: { ...FORM, cookie }, payload: new URLSearchParams([...(csrf === undefined ? [] : [['_csrf', csrf] as [string, string]]), ...pairs]).toString(),
  }));
  function api(method: 'POST' | 'PUT', url: string, body: unknown): Promise<LightMyRequestResponse> {
    return t.app.inject({ method, url, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  }

  async function rows(): Promise<Array<Row & { id: number }>> {
    const all = await t.database.db.selectFrom('identity_providers').select(['id', 'kind', 'label', 'enabled', 'jit_provisioning', 'settings', 'mappings']).orderBy('id').execute();
    return all.map((r) => ({
      id: Number(r.id), kind: r.kind, label: r.label, enabled: Number(r.enabled), jit_provisioning: Number(r.jit_provisioning),
      settings: JSON.parse(r.settings) as Record<string, unknown>, mappings: JSON.parse(r.mappings) as unknown[],
    }));
  }
  const rowOf = async (id: number): Promise<Row> => {
    const row: Partial<Row & { id: number }> = { ...(await rows()).find((r) => r.id === id)! };
    delete row.id;
    return row as Row;
  };

  /** A role (id 3) and a user group (id 1) for the mappings. */
  async function mappingTargets(): Promise<void> {
    assert.equal((await api('POST', '/roles.json', { role: { label: '<b>Ops</b> role', permission_ids: [1] } })).statusCode, 201);
    assert.equal((await api('POST', '/user_groups.json', { user_group: { label: 'Operators' } })).statusCode, 201);
  }

  const OIDC_FORM = (label: string): Array<[string, string]> => [
    ['kind', 'oidc'], ['enabled', 'true'], ['label', label], ['jit_provisioning', 'true'],
    ['issuer', 'https://sso.example.com/realms/corp'], ['client_id', 'cmi'], ['client_secret', OIDC_SECRET], ['scopes', 'openid email  groups'],
    ['login_claim', 'preferred_username'], ['email_claim', 'email'], ['groups_claim', 'roles'],
    ['mapping_rows', '2'], ['mappings-0-group', ' ops '], ['mappings-0-role_ids', '3'], ['mappings-0-role_ids', '1'], ['mappings-0-user_group_id', '1'],
    ['mappings-1-group', ''], ['mappings-1-user_group_id', ''],
  ];

  it('lists the providers and creates one of each kind through its form, with the URLs to register at it', async () => {
    await mappingTargets();
    const cookie = await session();
    const empty = await get(cookie, '/console/identity-providers');
    assert.equal(empty.statusCode, 200);
    assert.ok(empty.body.includes('<a href="/console/identity-providers">Identity providers</a>'), 'in the navigation');
    assert.ok(empty.body.includes('<p class="empty">No identity providers yet.</p>'));
    for (const kind of ['oidc', 'saml', 'ldap']) assert.ok(empty.body.includes(`href="/console/identity-providers/new?kind=${kind}"`), kind);
    const picker = await get(cookie, '/console/identity-providers/new');
    assert.equal(picker.statusCode, 200);
    assert.ok(picker.body.includes('<li><a href="/console/identity-providers/new?kind=saml">SAML 2.0</a></li>'));

    const form = await get(cookie, '/console/identity-providers/new?kind=oidc');
    assert.equal(form.statusCode, 200);
    assert.ok(form.body.includes('<input type="hidden" name="kind" value="oidc">'));
    assert.ok(form.body.includes('<input id="client_secret" name="client_secret" type="password" maxlength="1024" autocomplete="new-password" value="">'), 'the secret a password field, empty');
    assert.ok(form.body.includes('<input id="scopes" name="scopes" type="text" maxlength="1024" value="openid email profile" aria-describedby="scopes-hint">'), 'the defaults filled in');
    assert.ok(form.body.includes('<label class="check" for="mappings-0-role_ids-3"><input type="checkbox" id="mappings-0-role_ids-3" name="mappings-0-role_ids" value="3"> <span>&lt;b&gt;Ops&lt;/b&gt; role</span></label>'), 'the roles by name, escaped');
    assert.ok(form.body.includes('<select id="mappings-1-user_group_id" name="mappings-1-user_group_id"><option value="" selected>(none)</option><option value="1">Operators</option></select>'), 'the user groups by name');
    const csrf = csrfOf(form.body);

    const oidc = await post(cookie, csrf, '/console/identity-providers', OIDC_FORM('Corp <SSO>'));
    assert.deepEqual([oidc.statusCode, oidc.headers.location], [303, '/console/identity-providers/1?notice=created'], oidc.body);
    assert.deepEqual(await rowOf(1), {
      kind: 'oidc', label: 'Corp <SSO>', enabled: 1, jit_provisioning: 1,
      settings: { issuer: 'https://sso.example.com/realms/corp', client_id: 'cmi', client_secret: OIDC_SECRET, scopes: ['openid', 'email', 'groups'], login_claim: 'preferred_username', email_claim: 'email', groups_claim: 'roles' },
      mappings: [{ group: 'ops', role_ids: [3, 1], user_group_id: 1 }],
    });
    const oidcPage = await get(cookie, '/console/identity-providers/1?notice=created');
    assert.equal(oidcPage.statusCode, 200);
    assert.ok(oidcPage.body.includes('<h1>Corp &lt;SSO&gt;</h1>'), 'the label escaped');
    assert.ok(oidcPage.body.includes('Provider created: register cmi at it with the URLs below.'));
    assert.ok(oidcPage.body.includes(`<dt>Redirect URI</dt><dd><input id="sso-url-0" readonly value="${BASE}/console/sso/1/callback" aria-label="Redirect URI" size="70"> <button type="button" data-copy="sso-url-0">Copy</button>`), 'the redirect URI to copy');
    assert.ok(oidcPage.body.includes('<dt>Client secret (write-only)</dt><dd>set (never shown)</dd>'));
    assert.ok(oidcPage.body.includes('<tr><td><code>ops</code></td><td>&lt;b&gt;Ops&lt;/b&gt; role, Administrator</td>\n<td>Operators</td></tr>'), 'the mapping by names');
    assert.ok(oidcPage.body.includes('<span class="hint" id="client_secret-hint">One is kept: leave it empty to keep it.</span>'));
    assert.ok(oidcPage.body.includes('id="mappings-0-role_ids-3" name="mappings-0-role_ids" value="3" checked>'), 'the kept mapping in the form');

    const samlForm = await get(cookie, '/console/identity-providers/new?kind=saml');
    assert.ok(samlForm.body.includes('<select id="name_id_format" name="name_id_format" aria-describedby="name_id_format-hint"><option value="persistent" selected>persistent</option><option value="email">email</option></select>'));
    const saml = await post(cookie, csrf, '/console/identity-providers', [
      ['kind', 'saml'], ['label', 'Corp SAML'], ['idp_metadata_url', 'https://idp.example.com/metadata'], ['idp_metadata_xml', ''], ['name_id_format', 'email'],
      ['login_attribute', 'uid'], ['email_attribute', 'mail'], ['groups_attribute', 'memberOf'], ['mapping_rows', '2'],
    ]);
    assert.deepEqual([saml.statusCode, saml.headers.location], [303, '/console/identity-providers/2?notice=created'], saml.body);
    assert.deepEqual(await rowOf(2), {
      kind: 'saml', label: 'Corp SAML', enabled: 0, jit_provisioning: 0,
      settings: { name_id_format: 'email', login_attribute: 'uid', email_attribute: 'mail', groups_attribute: 'memberOf', idp_metadata_url: 'https://idp.example.com/metadata', idp_metadata_xml: '' },
      mappings: [],
    });
    const samlPage = await get(cookie, '/console/identity-providers/2');
    assert.ok(samlPage.body.includes(`value="${BASE}/console/sso/2/metadata" aria-label="Service provider metadata (its entity id)"`), 'the SP metadata URL');
    assert.ok(samlPage.body.includes(`value="${BASE}/console/sso/2/acs" aria-label="Assertion consumer service (HTTP-POST)"`), 'the ACS URL');
    assert.ok(samlPage.body.includes('<p class="empty">No mappings: everyone signing in gets the role user.</p>'));
    assert.ok(samlPage.body.includes('<button type="submit">Enable</button>'), 'disabled: offered to enable');

    const ldap = await post(cookie, csrf, '/console/identity-providers', [
      ['kind', 'ldap'], ['enabled', 'true'], ['label', 'Directory'], ['url', 'ldaps://ldap.example.com:636'], ['ca_certificate', ''],
      ['bind_dn', 'cn=svc,dc=example,dc=org'], ['bind_password', LDAP_SECRET], ['base_dn', 'ou=people,dc=example,dc=org'],
      ['user_filter', '(&(objectClass=inetOrgPerson)(uid={login}))'], ['group_attribute', 'memberOf'], ['allow_basic_auth', 'true'],
      ['mapping_rows', '2'], ['mappings-0-group', 'cn=admins,ou=groups,dc=example,dc=org'], ['mappings-0-role_ids', '1'], ['mappings-0-user_group_id', ''],
    ]);
    assert.deepEqual([ldap.statusCode, ldap.headers.location], [303, '/console/identity-providers/3?notice=created'], ldap.body);
    assert.deepEqual(await rowOf(3), {
      kind: 'ldap', label: 'Directory', enabled: 1, jit_provisioning: 0,
      settings: {
        url: 'ldaps://ldap.example.com:636', bind_dn: 'cn=svc,dc=example,dc=org', bind_password: LDAP_SECRET, base_dn: 'ou=people,dc=example,dc=org',
        user_filter: '(&(objectClass=inetOrgPerson)(uid={login}))', group_attribute: 'memberOf', start_tls: false, ca_certificate: '', allow_basic_auth: true,
      },
      mappings: [{ group: 'cn=admins,ou=groups,dc=example,dc=org', role_ids: [1], user_group_id: null }],
    });
    const ldapPage = await get(cookie, '/console/identity-providers/3');
    assert.ok(ldapPage.body.includes('<p>An LDAP directory needs nothing of cmi: its users sign in with the ordinary sign-in form.</p>'));
    assert.ok(ldapPage.body.includes('<dt>Service account password (write-only)</dt><dd>set (never shown)</dd>'));
    assert.ok(ldapPage.body.includes('<input type="checkbox" id="allow_basic_auth" name="allow_basic_auth" value="true" checked>'));
    assert.ok(ldapPage.body.includes('<input type="checkbox" id="start_tls" name="start_tls" value="true">'));

    const list = await get(cookie, '/console/identity-providers');
    assert.ok(list.body.includes('<p class="total">3 providers</p>'));
    assert.ok(list.body.includes('<td><a href="/console/identity-providers/1">Corp &lt;SSO&gt;</a></td><td>OpenID Connect</td><td>yes</td><td>yes</td>\n<td class="number">1</td>'), list.body);
    assert.ok(list.body.includes('<td><a href="/console/identity-providers/2">Corp SAML</a></td><td>SAML 2.0</td><td>no</td><td>no</td>\n<td class="number">0</td>'));
    assert.ok(list.body.includes('<td><a href="/console/identity-providers/3">Directory</a></td><td>LDAP</td><td>yes</td><td>no</td>\n<td class="number">1</td>'));
    // The API gives the same providers, its secrets null.
    const served = await t.app.inject({ method: 'GET', url: '/sysadmin_tools/identity_providers/1.json', headers: { authorization: t.adminAuth } });
    assert.equal((JSON.parse(served.body) as { identity_provider: { settings: Record<string, unknown> } }).identity_provider.settings.client_secret, null);
  });

  it('says the API\'s refusals beside their fields (422), never writing a typed secret back', async () => {
    await mappingTargets();
    const cookie = await session();
    const csrf = csrfOf((await get(cookie, '/console/identity-providers/new?kind=oidc')).body);
    const blank = await post(cookie, csrf, '/console/identity-providers', OIDC_FORM('').map(([k, v]) => [k, k === 'client_secret' ? TYPED_SECRET : v]));
    assert.equal(blank.statusCode, 422);
    assert.ok(blank.body.includes('<span class="field-error" id="label-error">label can&#39;t be blank</span>'), blank.body);
    assert.ok(blank.body.includes('<input id="client_secret" name="client_secret" type="password" maxlength="1024" autocomplete="new-password" value="">'), 'the secret not written back');
    assert.ok(blank.body.includes('value="https://sso.example.com/realms/corp"'), 'the typed issuer kept');
    assert.ok(blank.body.includes('id="mappings-0-role_ids-3" name="mappings-0-role_ids" value="3" checked>'), 'the typed mapping kept');
    const bad = await post(cookie, csrf, '/console/identity-providers', [
      ['kind', 'oidc'], ['label', 'Corp'], ['issuer', 'http://sso.example.com'], ['client_id', 'cmi'], ['client_secret', ''], ['scopes', ''],
      ['login_claim', ''], ['email_claim', 'email'], ['groups_claim', 'groups'], ['mapping_rows', '0'],
    ]);
    assert.equal(bad.statusCode, 422);
    assert.ok(bad.body.includes('<span class="field-error" id="issuer-error">issuer must be an https URL without query or fragment (http only for this machine: localhost, 127.0.0.1, ::1)</span>'), bad.body);
    assert.ok(bad.body.includes('<span class="field-error" id="client_secret-error">client secret can&#39;t be blank for an oidc provider</span>'));
    assert.ok(bad.body.includes('<span class="field-error" id="login_claim-error">login claim can&#39;t be blank</span>'));
    assert.ok(bad.body.includes('aria-invalid="true" aria-describedby="issuer-error"'), 'tied to its field');
    const mapping = await post(cookie, csrf, '/console/identity-providers', [
      ['kind', 'ldap'], ['label', 'Directory'], ['url', 'ldap://ldap.example.com'], ['user_filter', 'uid=x'], ['group_attribute', 'memberOf'],
      ['mapping_rows', '2'], ['mappings-0-group', 'ops'], ['mappings-0-user_group_id', '99'], ['mappings-1-group', ''], ['mappings-1-role_ids', '3'],
    ]);
    assert.equal(mapping.statusCode, 422);
    assert.ok(mapping.body.includes('<span class="field-error" id="mappings-1-group-error">group must be a group&#39;s name or DN of 1 to 1024 characters</span>'), mapping.body);
    const saml = await post(cookie, csrf, '/console/identity-providers', [
      ['kind', 'saml'], ['label', 'SAML'], ['idp_metadata_url', ''], ['idp_metadata_xml', ''], ['name_id_format', 'persistent'],
      ['login_attribute', 'uid'], ['email_attribute', 'mail'], ['groups_attribute', 'groups'], ['mapping_rows', '2'], ['mappings-0-group', 'ops'], ['mappings-0-user_group_id', '99'],
    ]);
    assert.equal(saml.statusCode, 422);
    assert.ok(saml.body.includes('<span class="field-error" id="settings-error">settings must give one of idp_metadata_url and idp_metadata_xml</span>'), saml.body);
    const group = await post(cookie, csrf, '/console/identity-providers', [
      ['kind', 'saml'], ['label', 'SAML'], ['idp_metadata_url', 'https://idp.example.com/metadata'], ['idp_metadata_xml', ''], ['name_id_format', 'persistent'],
      ['login_attribute', 'uid'], ['email_attribute', 'mail'], ['groups_attribute', 'groups'], ['mapping_rows', '2'], ['mappings-0-group', 'ops'], ['mappings-0-user_group_id', '99'],
    ]);
    assert.equal(group.statusCode, 422);
    assert.ok(group.body.includes('<span class="field-error" id="mappings-0-user_group_id-error">user group names no user group: 99</span>'), group.body);
    assert.deepEqual(await rows(), [], 'nothing made');
  });

  it('edits a provider: an empty secret keeps the kept one, a moved issuer needs it again, mappings removed and added; enables, disables, deletes after asking', async () => {
    await mappingTargets();
    const made = await api('POST', '/sysadmin_tools/identity_providers.json', { identity_provider: {
      kind: 'oidc', label: 'Corp', settings: { issuer: 'https://sso.example.com', client_id: 'cmi', client_secret: OIDC_SECRET }, mappings: [{ group: 'ops', role_ids: [3], user_group_id: 1 }],
    } });
    assert.equal(made.statusCode, 201, made.body);
    const cookie = await session();
    const shown = await get(cookie, '/console/identity-providers/1');
    const csrf = csrfOf(shown.body);
    /** The edit form as the page sends it, with `pairs` given instead of the fields of their names. */
    const edit = (pairs: Array<[string, string]>) => {
      const given = new Set(pairs.map(([name]) => name));
      const form: Array<[string, string]> = [
        ['label', 'Corp SSO'], ['issuer', 'https://sso.example.com'], ['client_id', 'cmi'], ['scopes', 'openid email profile'],
        ['login_claim', 'preferred_username'], ['email_claim', 'email'], ['groups_claim', 'groups'], ['mapping_rows', '3'],
        ['mappings-0-group', 'ops'], ['mappings-0-role_ids', '3'], ['mappings-0-user_group_id', '1'],
      ];
      return post(cookie, csrf, '/console/identity-providers/1', [...form.filter(([name]) => !given.has(name)), ...pairs]);
    };
    const kept = await edit([['client_secret', '']]);
    assert.deepEqual([kept.statusCode, kept.headers.location], [303, '/console/identity-providers/1?notice=saved'], kept.body);
    assert.deepEqual(await rowOf(1), {
      kind: 'oidc', label: 'Corp SSO', enabled: 1, jit_provisioning: 0,
      settings: { issuer: 'https://sso.example.com', client_id: 'cmi', client_secret: OIDC_SECRET, scopes: ['openid', 'email', 'profile'], login_claim: 'preferred_username', email_claim: 'email', groups_claim: 'groups' },
      mappings: [{ group: 'ops', role_ids: [3], user_group_id: 1 }],
    });

    const moved = await edit([['client_secret', ''], ['issuer', 'https://other.example.com']]);
    assert.equal(moved.statusCode, 422);
    assert.ok(moved.body.includes('<span class="field-error" id="client_secret-error">client secret must be given again when issuer or client_id changes</span>'), moved.body);
    assert.ok(moved.body.includes('value="https://other.example.com"'), 'the typed issuer kept');
    assert.equal((await rowOf(1)).settings.issuer, 'https://sso.example.com', 'nothing changed');

    const replaced = await edit([['client_secret', NEW_SECRET], ['issuer', 'https://other.example.com'], ['mappings-0-remove', '1'],
      ['mappings-1-group', 'cn=admins,ou=groups,dc=example,dc=org'], ['mappings-1-role_ids', '1'], ['mappings-1-user_group_id', ''], ['jit_provisioning', 'true']]);
    assert.equal(replaced.statusCode, 303, replaced.body);
    assert.deepEqual(await rowOf(1), {
      kind: 'oidc', label: 'Corp SSO', enabled: 1, jit_provisioning: 1,
      settings: { issuer: 'https://other.example.com', client_id: 'cmi', client_secret: NEW_SECRET, scopes: ['openid', 'email', 'profile'], login_claim: 'preferred_username', email_claim: 'email', groups_claim: 'groups' },
      mappings: [{ group: 'cn=admins,ou=groups,dc=example,dc=org', role_ids: [1], user_group_id: null }],
    });

    const disabled = await post(cookie, csrf, '/console/identity-providers/1/disable');
    assert.deepEqual([disabled.statusCode, disabled.headers.location], [303, '/console/identity-providers/1?notice=disabled']);
    assert.equal((await rowOf(1)).enabled, 0);
    const page = await get(cookie, '/console/identity-providers/1?notice=disabled');
    assert.ok(page.body.includes('<form method="post" action="/console/identity-providers/1/enable">'), 'offered to enable');
    assert.ok(page.body.includes('<dt>Enabled</dt><dd>no (not offered at sign-in)</dd>'));
    const enabled = await post(cookie, csrf, '/console/identity-providers/1/enable');
    assert.deepEqual([enabled.statusCode, enabled.headers.location], [303, '/console/identity-providers/1?notice=enabled']);
    assert.equal((await rowOf(1)).enabled, 1);

    const confirm = await get(cookie, '/console/identity-providers/1/delete');
    assert.equal(confirm.statusCode, 200);
    assert.ok(confirm.body.includes('<h1>Delete Corp SSO?</h1>'));
    assert.ok(confirm.body.includes('<form method="post" action="/console/identity-providers/1/delete">'));
    assert.equal((await rows()).length, 1, 'asking deletes nothing');
    const deleted = await post(cookie, csrf, '/console/identity-providers/1/delete');
    assert.deepEqual([deleted.statusCode, deleted.headers.location], [303, '/console/identity-providers?notice=deleted']);
    assert.deepEqual(await rows(), []);
    assert.ok((await get(cookie, '/console/identity-providers?notice=deleted')).body.includes('<p class="notice" role="status">Provider deleted.</p>'));
  });

  it('is refused (403) to those without the permissions and to a form without its CSRF token', async () => {
    const made = await api('POST', '/sysadmin_tools/identity_providers.json', { identity_provider: { kind: 'oidc', label: 'Corp', settings: { issuer: 'https://sso.example.com', client_id: 'cmi', client_secret: OIDC_SECRET } } });
    assert.equal(made.statusCode, 201);
    const before = await rows();
    // A plain user: no link, every page and form refused.
    let cookie = await session(ALICE.login, ALICE.password);
    const users = await get(cookie, '/console/users');
    assert.ok(!users.body.includes('/console/identity-providers'), 'no link');
    let csrf = csrfOf(users.body);
    for (const url of ['/console/identity-providers', '/console/identity-providers/new?kind=oidc', '/console/identity-providers/1', '/console/identity-providers/1/delete']) {
      assert.equal((await get(cookie, url)).statusCode, 403, url);
    }
    for (const url of ['/console/identity-providers', '/console/identity-providers/1', '/console/identity-providers/1/disable', '/console/identity-providers/1/delete']) {
      assert.equal((await post(cookie, csrf, url, OIDC_FORM('Mine'))).statusCode, 403, url);
    }
    // A holder of identity_providers.read alone: the pages, no form, every change refused.
    assert.equal((await api('POST', '/roles.json', { role: { label: 'Provider reader', permission_ids: [41] } })).statusCode, 201);
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { role_ids: [2, 3] } })).statusCode, 204);
    cookie = await session(ALICE.login, ALICE.password);
    const list = await get(cookie, '/console/identity-providers');
    assert.equal(list.statusCode, 200);
    assert.ok(list.body.includes('<a href="/console/identity-providers">Identity providers</a>'), 'the link');
    assert.ok(!list.body.includes('/new?kind='), 'no new provider');
    const one = await get(cookie, '/console/identity-providers/1');
    assert.equal(one.statusCode, 200);
    assert.ok(one.body.includes(`${BASE}/console/sso/1/callback`));
    assert.ok(!one.body.includes('<form method="post" action="/console/identity-providers/1"'), 'no edit form');
    assert.ok(!one.body.includes('/console/identity-providers/1/delete'), 'no delete');
    csrf = csrfOf(one.body);
    assert.equal((await get(cookie, '/console/identity-providers/new?kind=oidc')).statusCode, 403);
    for (const url of ['/console/identity-providers', '/console/identity-providers/1', '/console/identity-providers/1/disable', '/console/identity-providers/1/delete']) {
      assert.equal((await post(cookie, csrf, url, OIDC_FORM('Mine'))).statusCode, 403, url);
    }
    // identity_providers.manage alone changes nothing: a provider can sign in as anyone, so a change needs every permission.
    assert.equal((await api('PUT', '/roles/3.json', { role: { permission_ids: [41, 42] } })).statusCode, 204);
    const form = await get(cookie, '/console/identity-providers/new?kind=oidc');
    assert.equal(form.statusCode, 403);
    assert.ok(form.body.includes('needs every permission: an identity provider can sign in as any account linked to it'), form.body);
    assert.ok(!(await get(cookie, '/console/identity-providers')).body.includes('/console/identity-providers/new?kind='), 'no new-provider links');
    // Without the session's CSRF token: refused, nothing changed.
    const admin = await session();
    for (const url of ['/console/identity-providers', '/console/identity-providers/1', '/console/identity-providers/1/disable', '/console/identity-providers/1/delete']) {
      const res = await post(admin, undefined, url, OIDC_FORM('Forged'));
      assert.equal(res.statusCode, 403, url);
      assert.ok(res.body.includes('its security token is missing or wrong'), url);
    }
    assert.deepEqual(await rows(), before, 'nothing changed');
  });
});

describe('the console\'s identity providers in a browser', () => {
  let browser: Browser;
  let t: TestApp;
  before(async () => {
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    t = await createTestApp();
  });
  after(async () => {
    await browser.close();
    await t.close();
  });

  it('makes an OpenID Connect provider through the form with a mapping, copies its redirect URI; no script or style refused, no secret shown', async () => {
    const base = `http://127.0.0.1:${await listenLocally(t.app)}`;
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const outside: string[] = [];
    const problems: string[] = [];
    await context.route('**/*', (route) => {
      if (new URL(route.request().url()).hostname === '127.0.0.1') return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${base}/console/sign-in`);
    await page.fill('#login', ADMIN.login);
    await page.fill('#password', ADMIN.password);
    await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/console/sign-in')), page.press('#password', 'Enter')]);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Identity providers' }).click();
    await page.waitForURL(`${base}/console/identity-providers`);
    await page.getByRole('link', { name: 'OpenID Connect' }).click();
    await page.waitForURL(`${base}/console/identity-providers/new?kind=oidc`);
    await page.getByLabel(/^Label/).fill('Corp SSO');
    await page.getByLabel('Issuer URL').fill('https://sso.example.com');
    await page.getByLabel('Client id').fill('cmi');
    await page.getByLabel('Client secret (write-only)').fill(OIDC_SECRET);
    await page.locator('#mappings-0-group').fill('ops');
    await page.locator('#mappings-0-role_ids-1').check();
    await Promise.all([page.waitForURL(`${base}/console/identity-providers/1?notice=created`), page.getByRole('button', { name: 'Create provider' }).click()]);
    assert.equal(await page.locator('p.notice').textContent(), 'Provider created: register cmi at it with the URLs below.');
    await page.locator('button[data-copy="sso-url-0"]').click();
    await page.locator('[data-copied-for="sso-url-0"]', { hasText: 'Copied.' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), `${base}/console/sso/1/callback`);
    assert.equal(await page.inputValue('#client_secret'), '', 'the secret field empty');
    assert.ok(!(await page.content()).includes(OIDC_SECRET), 'no secret in the page');
    assert.equal(await page.locator('#mappings-0-role_ids-1').isChecked(), true);
    const row = await t.database.db.selectFrom('identity_providers').select(['settings', 'mappings']).executeTakeFirstOrThrow();
    assert.equal((JSON.parse(row.settings) as { client_secret: string }).client_secret, OIDC_SECRET);
    assert.deepEqual(JSON.parse(row.mappings), [{ group: 'ops', role_ids: [1], user_group_id: null }]);
    await context.close();
    assert.deepEqual([outside, problems], [[], []]);
  });
});
