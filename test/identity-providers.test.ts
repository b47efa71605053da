import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auditTrail } from '../src/audit/audit-trail.js';
import { auditRepository } from '../src/audit/audit.store.js';
import { IdentityRefused } from '../src/identity/external-identity.js';
import { identityProvidersRepository } from '../src/identity/identity-providers.store.js';
import { identitySignIn } from '../src/identity/identity-sign-in.js';
import type { IdentityProvider } from '../src/identity/identity-provider.js';
import { usersRepository } from '../src/users/users.store.js';
import { createTestApp, type TestApp } from './support/app.js';
import { JSON_TYPE, XML_DECLARATION, XML_TYPE } from './support/error-reports.js';
import { callApi } from './support/http.js';

// Identity providers (docs/api.md#identity-providers): the API that keeps them, and the sign-in that
// links, makes and maps the accounts they vouch for, on the database DATABASE_URL names.

const PATH = '/sysadmin_tools/identity_providers';
const OIDC = { kind: 'oidc', label: 'Corp SSO', settings: { issuer: 'https://sso.example.com/realms/corp', client_id: 'cmi', client_secret: 'oidc-client-secret-1' } };
const OIDC_SETTINGS = { issuer: 'https://sso.example.com/realms/corp', client_id: 'cmi', client_secret: null, scopes: ['openid', 'email', 'profile'], login_claim: 'preferred_username', email_claim: 'email', groups_claim: 'groups' };
const LDAP = {
  kind: 'ldap', label: 'Corp LDAP', settings: { url: 'ldaps://ldap.example.com:636', bind_dn: 'cn=cmi,dc=example,dc=org', bind_password: 'ldap-service-secret', base_dn: 'dc=example,dc=org', user_filter: '(uid={login})' },
};

describe('identity providers over the API', () => {
  let t: TestApp;
  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, auth = t.adminAuth) => callApi(t.app, method, url, { auth, ...(body === undefined ? {} : { body }) });
  const stored = async (id: number) => JSON.parse((await t.database.db.selectFrom('identity_providers').select('settings').where('id', '=', id).executeTakeFirstOrThrow()).settings) as Record<string, unknown>;
  const audited = async (action: string) => (await t.database.db.selectFrom('audit_events').select(['changes']).where('action', '=', action).orderBy('id').execute()).map((row) => row.changes);

  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('adds an OpenID Connect provider: 201 with its Location, the secret null in the answer and kept in the database', async () => {
    const res = await api('POST', `${PATH}.json`, { identity_provider: OIDC });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    const { identity_provider: provider } = JSON.parse(res.body) as { identity_provider: { id: number } };
    assert.equal(res.headers.location, `${PATH}/${provider.id}.json`);
    const at = t.time.clock().toISOString().replace('.000Z', '+00:00');
    assert.equal(res.body, JSON.stringify({ identity_provider: { id: provider.id, kind: 'oidc', label: 'Corp SSO', enabled: true, settings: OIDC_SETTINGS, mappings: [], jit_provisioning: false, created_at: at, updated_at: at } }));
    assert.equal((await stored(provider.id)).client_secret, 'oidc-client-secret-1');
    // The audit row names the secret as set, never its value.
    const [changes] = await audited('identity_provider.create');
    assert.ok(changes !== undefined && !changes.includes('oidc-client-secret-1'), changes);
    assert.match(changes, /"settings\.client_secret":"\[redacted\]"/);
  });

  it('answers XML with settings and mappings as their JSON text', async () => {
    const res = await api('GET', `${PATH}/1.xml`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], XML_TYPE);
    assert.ok(res.body.startsWith(`${XML_DECLARATION}<identity_provider>`), res.body);
    assert.ok(res.body.includes(`<settings>${JSON.stringify(OIDC_SETTINGS).replaceAll('"', '&quot;')}</settings>`) || res.body.includes(`<settings>${JSON.stringify(OIDC_SETTINGS)}</settings>`), res.body);
    assert.ok(!res.body.includes('oidc-client-secret-1'));
  });

  it('names every bad field in one 422', async () => {
    const res = await api('POST', `${PATH}.json`, { identity_provider: { kind: 'oidc', label: ' ', settings: { issuer: 'http://sso.example.com', scopes: ['openid', 'two words'], colour: 'red' } } });
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(JSON.parse(res.body), { errors: {
      label: ["can't be blank"],
      'settings.scopes': ['must be a list of names'],
      'settings.colour': ['is not a setting of an oidc provider (its settings: issuer, client_id, client_secret, scopes, login_claim, email_claim, groups_claim)'],
    } });
    const plain = await api('POST', `${PATH}.json`, { identity_provider: { kind: 'oidc', label: 'x', settings: { issuer: 'http://sso.example.com', client_id: 'a' } } });
    assert.deepEqual(JSON.parse(plain.body), { errors: {
      'settings.client_secret': ["can't be blank for an oidc provider"],
      'settings.issuer': ['must be an https URL without query or fragment (http only for this machine: localhost, 127.0.0.1, ::1)'],
    } });
    const ldap = await api('POST', `${PATH}.json`, { identity_provider: { ...LDAP, settings: { ...LDAP.settings, url: 'ldap://ldap.example.com', user_filter: '(uid=*)' } } });
    assert.deepEqual(JSON.parse(ldap.body), { errors: {
      'settings.url': ['must be ldaps://, or ldap:// with start_tls true: passwords would travel in clear (plain ldap:// only for this machine)'],
      'settings.user_filter': ['must hold {login}, where the login typed goes'],
    } });
    const saml = await api('POST', `${PATH}.json`, { identity_provider: { kind: 'saml', label: 'IdP', settings: { name_id_format: 'transient' } } });
    assert.deepEqual(JSON.parse(saml.body), { errors: {
      settings: ['must give one of idp_metadata_url and idp_metadata_xml'],
      'settings.name_id_format': ['must be persistent or email (a transient NameID changes at every sign-in)'],
    } });
    const mapped = await api('POST', `${PATH}.json`, { identity_provider: { ...OIDC, mappings: [{ group: 'ops', role_ids: [1, 999], user_group_id: 77 }] } });
    assert.equal(mapped.statusCode, 422);
    assert.deepEqual(JSON.parse(mapped.body), { errors: { 'mappings[0].role_ids': ['names no role: 999'], 'mappings[0].user_group_id': ['names no user group: 77'] } });
    assert.equal(Number((await t.database.db.selectFrom('identity_providers').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n), 1);
  });

  it('keeps a secret unless the provider moves to another server, where it must be given again', async () => {
    const ldap = JSON.parse((await api('POST', `${PATH}.json`, { identity_provider: LDAP })).body) as { identity_provider: { id: number } };
    const id = ldap.identity_provider.id;
    assert.equal((await api('PUT', `${PATH}/${id}.json`, { identity_provider: { label: 'Directory', settings: { start_tls: false } } })).statusCode, 204);
    assert.equal((await stored(id)).bind_password, 'ldap-service-secret');
    const moved = await api('PUT', `${PATH}/${id}.json`, { identity_provider: { settings: { url: 'ldaps://evil.example.net' } } });
    assert.equal(moved.statusCode, 422);
    assert.equal(moved.body, JSON.stringify({ errors: { 'settings.bind_password': ['must be given again when url or bind_dn changes'] } }));
    assert.equal((await api('PUT', `${PATH}/${id}.json`, { identity_provider: { settings: { url: 'ldaps://ldap2.example.com', bind_password: 'second-secret' } } })).statusCode, 204);
    assert.equal((await stored(id)).bind_password, 'second-secret');
    const kind = await api('PUT', `${PATH}/${id}.json`, { identity_provider: { kind: 'oidc' } });
    assert.equal(kind.body, JSON.stringify({ errors: { kind: ['cannot change (this provider is ldap): make a new one'] } }));
    const changes = (await audited('identity_provider.update')).join('\n');
    assert.ok(!changes.includes('second-secret') && !changes.includes('ldap-service-secret'), changes);
    assert.match(changes, /"settings\.bind_password":"\[redacted\]"/);
  });

  it('is changed only by a holder of every permission: a provider can sign in as any account linked to it', async () => {
    const role = await api('POST', '/roles.json', { role: { label: 'SSO keeper', permission_ids: [41, 42] } });
    assert.equal(role.statusCode, 201, role.body);
    const roleId = (JSON.parse(role.body) as { role: { id: number } }).role.id;
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { role_ids: [roleId] } })).statusCode, 204);
    const refused = await api('POST', `${PATH}.json`, { identity_provider: { ...OIDC, jit_provisioning: true, mappings: [{ group: 'me', role_ids: [1] }] } }, t.aliceAuth);
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.body, JSON.stringify({ errors: { base: ['You are not authorized to perform this action (needs every permission: an identity provider can sign in as any account linked to it)'] } }));
    assert.equal((await api('PUT', `${PATH}/1.json`, { identity_provider: { label: 'Mine' } }, t.aliceAuth)).statusCode, 403);
    assert.equal((await api('GET', `${PATH}/1.json`, undefined, t.aliceAuth)).statusCode, 200);
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { role_ids: [2] } })).statusCode, 204);
  });

  it('is refused to a user without the permissions, and lists with pagination', async () => {
    assert.equal((await api('GET', `${PATH}.json`, undefined, t.aliceAuth)).statusCode, 403);
    assert.equal((await api('POST', `${PATH}.json`, { identity_provider: OIDC }, t.aliceAuth)).statusCode, 403);
    const list = await api('GET', `${PATH}.json?per_page=1`);
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['x-total'], '2');
    const [only] = JSON.parse(list.body) as Array<{ identity_provider: { id: number; settings: Record<string, unknown> } }>;
    assert.equal(only?.identity_provider.id, 1);
    assert.equal(only?.identity_provider.settings.client_secret, null);
  });

  it('shows a button on the console\'s sign-in page for each enabled OpenID Connect or SAML provider, none for LDAP', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/console/sign-in' });
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes('<a class="button" href="/console/sso/1/start?next=%2Fconsole">Sign in with Corp SSO</a>'), page.body);
    assert.ok(!page.body.includes('Directory'));
    assert.equal((await api('PUT', `${PATH}/1.json`, { identity_provider: { enabled: false } })).statusCode, 204);
    assert.ok(!(await t.app.inject({ method: 'GET', url: '/console/sign-in' })).body.includes('/console/sso/'));
    assert.equal((await t.app.inject({ method: 'GET', url: '/console/sso/1/start' })).statusCode, 404);
    assert.equal((await api('PUT', `${PATH}/1.json`, { identity_provider: { enabled: true } })).statusCode, 204);
  });

  it('removes a provider: 204, then 404', async () => {
    assert.equal((await api('DELETE', `${PATH}/2.json`)).statusCode, 204);
    assert.equal((await api('GET', `${PATH}/2.json`)).statusCode, 404);
    assert.deepEqual(await audited('identity_provider.delete'), [JSON.stringify({ label: 'Directory', kind: 'ldap' })]);
  });
});

describe('the accounts identity providers vouch for', () => {
  let t: TestApp;
  let provider: IdentityProvider;
  let signIn: ReturnType<typeof identitySignIn>;
  const users = () => usersRepository(t.database);
  const person = { subject: 'f3a1-77', login: 'jane', email: 'jane@example.com', groups: ['cn=cmi-admins,ou=groups,dc=example,dc=org'], firstName: 'Jane', lastName: 'Doe' };

  before(async () => {
    t = await createTestApp();
    const providers = identityProvidersRepository(t.database);
    provider = await providers.create({
      kind: 'oidc', label: 'Corp SSO', enabled: true, jit_provisioning: true, settings: OIDC.settings as IdentityProvider['settings'],
      mappings: [{ group: 'cmi-admins', role_ids: [1], user_group_id: null }],
    }, t.time.clock());
    signIn = identitySignIn(providers, users(), (ids) => users().unknownRoleIds(ids), t.time.clock, auditTrail(auditRepository(t.database), t.time.clock, { retentionDays: 90 }));
  });
  after(() => t.close());

  it('makes an account on a first sign-in, without a cmi password, with the roles its groups map to, and finds it again by subject', async () => {
    const user = await signIn.accountOf(provider, person, '192.0.2.7');
    assert.equal(user.login, 'jane');
    assert.equal(user.email, 'jane@example.com');
    assert.deepEqual(user.roles.map((role) => role.id), [1]);
    assert.equal(await users().passwordHash(user.id), '');
    assert.equal((await signIn.accountOf(provider, { ...person, login: 'renamed' }, '192.0.2.7')).id, user.id);
    const rows = await t.database.db.selectFrom('audit_events').select(['credential', 'action', 'address']).where('target_id', '=', user.id).execute();
    assert.deepEqual(rows, [{ credential: 'sso', action: 'user.create', address: '192.0.2.7' }]);
  });

  it('re-maps the roles at each sign-in: out of the group, the role goes', async () => {
    const user = await signIn.accountOf(provider, { ...person, groups: [] }, '192.0.2.7');
    assert.deepEqual(user.roles.map((role) => role.id), [2]);
    const update = await t.database.db.selectFrom('audit_events').select('changes').where('action', '=', 'user.update').where('target_id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(update.changes, JSON.stringify({ role_ids: [[1], [2]], user_group_id: [null, null], identity_provider_id: provider.id }));
  });

  it('refuses a new person whose login or email is another account\'s, and any new person when the provider makes no accounts', async () => {
    await assert.rejects(signIn.accountOf(provider, { ...person, subject: 'other', login: 'alice', email: 'x@example.com' }, '192.0.2.7'),
      new IdentityRefused('The login Corp SSO gave already belongs to another cmi account: an administrator must link or rename it'));
    await assert.rejects(signIn.accountOf({ ...provider, jit_provisioning: false }, { ...person, subject: 'newcomer' }, '192.0.2.7'),
      new IdentityRefused('No cmi account is linked to this Corp SSO identity, and Corp SSO does not create accounts: ask an administrator'));
    await assert.rejects(signIn.accountOf(provider, { ...person, subject: 'nologin', login: undefined }, '192.0.2.7'), IdentityRefused);
    await assert.rejects(signIn.accountOf(provider, { ...person, subject: 'shouty', login: 'shouty', email: 'ALICE@Example.com' }, '192.0.2.7'),
      new IdentityRefused('The email Corp SSO gave already belongs to another cmi account: an administrator must link or rename it'));
    assert.equal((await signIn.accountOf(provider, { ...person, subject: 'kim', login: 'kim', email: 'Kim@Example.COM' }, '192.0.2.7')).email, 'kim@example.com');
  });

  it('an account without a cmi password: no password opens it, and it sets none itself', async () => {
    const jane = await users().findCredentials('jane');
    assert.ok(jane);
    const own = `/users/${jane.user.id}.json`;
    assert.equal((await callApi(t.app, 'GET', own, { auth: t.basic('jane', '') })).statusCode, 401);
    assert.equal((await callApi(t.app, 'GET', own, { auth: t.basic('jane', 'anything') })).statusCode, 401);
    // An administrator gives it an API key; with it, the account changes its own fields without a current password.
    const key = await callApi(t.app, 'POST', `/users/${jane.user.id}/make_new_api_key.json`, { auth: t.adminAuth });
    assert.equal(key.statusCode, 200, key.body);
    const apiKey = (JSON.parse(key.body) as { user: { api_key: string } }).user.api_key;
    const refused = await callApi(t.app, 'PUT', own, { auth: t.basic('jane', apiKey), body: { user: { password: 'a-new-password-1' } } });
    assert.equal(refused.statusCode, 422);
    assert.equal(refused.body, JSON.stringify({ errors: { password: ["can't be set by the account itself: it signs in through its identity provider (an administrator can give it a cmi password)"] } }));
    assert.equal(await users().passwordHash(jane.user.id), '');
    assert.equal((await callApi(t.app, 'PUT', own, { auth: t.adminAuth, body: { user: { password: 'given-by-admin-1' } } })).statusCode, 204);
    assert.equal((await callApi(t.app, 'GET', own, { auth: t.basic('jane', 'given-by-admin-1') })).statusCode, 200);
  });
});
