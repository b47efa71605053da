import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { escapeHtml } from '../src/shared/escape-html.js';
import { ADMIN, createTestApp, type TestApp } from './support/app.js';
import { callApi } from './support/http.js';
import { freePort } from './support/throwaway-postgres.js';

// Identity providers that cannot be reached (docs/security.md#identity-providers, docs/console.md#signing-in):
// an LDAP directory, an OpenID Connect issuer and a SAML metadata URL on a port of this machine where
// nothing listens. Every sign-in through them is the console's sign-in page saying so in a sentence,
// never a 500, and the break-glass administrator's own password keeps working meanwhile.

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const PROVIDERS = '/sysadmin_tools/identity_providers.json';
const DIRECTORY_DOWN = 'The directory Corp LDAP cannot be reached: try again later, or ask an administrator';

describe('identity providers that cannot be reached', () => {
  let t: TestApp;
  let closed: number;

  const addProvider = async (body: unknown) => {
    const res = await callApi(t.app, 'POST', PROVIDERS, { auth: t.adminAuth, body: { identity_provider: body } });
    assert.equal(res.statusCode, 201, res.body);
    return (JSON.parse(res.body) as { identity_provider: { id: number } }).identity_provider.id;
  };
  /** The one failure a sign-in page shows. */
  const failureOf = (body: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(body)?.[1];
  const buttonsOf = (body: string) => [...body.matchAll(/<a class="button" href="([^"]+)">([^<]*)<\/a>/g)].map((match) => `${match[1]} ${match[2]}`);

  before(async () => {
    t = await createTestApp();
    closed = await freePort();
    assert.equal(await addProvider({ kind: 'ldap', label: 'Corp LDAP', jit_provisioning: true, settings: { url: `ldap://127.0.0.1:${closed}`, base_dn: 'dc=example,dc=org', user_filter: '(uid={login})', allow_basic_auth: true } }), 1);
    assert.equal(await addProvider({ kind: 'oidc', label: 'Corp SSO', jit_provisioning: true, settings: { issuer: `http://127.0.0.1:${closed}`, client_id: 'cmi', client_secret: 'oidc-secret' } }), 2);
    assert.equal(await addProvider({ kind: 'saml', label: 'Corp SAML', jit_provisioning: true, settings: { idp_metadata_url: `http://127.0.0.1:${closed}/metadata` } }), 3);
  });
  after(() => t?.close());

  it('the console\'s password form: 502, the sign-in page saying the directory cannot be reached, with the providers\' buttons; no account made', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: new URLSearchParams({ login: 'lee', password: 'lee-directory-pw', next: '/console/users' }).toString() });
    assert.equal(res.statusCode, 502);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(failureOf(res.body), escapeHtml(DIRECTORY_DOWN));
    assert.match(res.body, /<input id="login" name="login" autocomplete="username" required maxlength="254" value="lee" autofocus>/);
    assert.deepEqual(buttonsOf(res.body), ['/console/sso/2/start?next=%2Fconsole%2Fusers Sign in with Corp SSO', '/console/sso/3/start?next=%2Fconsole%2Fusers Sign in with Corp SAML']);
    assert.equal(await t.database.db.selectFrom('users').select('id').where('login', '=', 'lee').executeTakeFirst(), undefined);
  });

  it('the break-glass administrator signs in with its own password meanwhile: the directory is never asked for it', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: new URLSearchParams({ login: ADMIN.login, password: ADMIN.password }).toString() });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, '/console');
    assert.equal((await callApi(t.app, 'GET', '/users.json', { auth: t.adminAuth })).statusCode, 200);
  });

  it('HTTP Basic with a directory\'s password: 502 naming the directory, in JSON and XML', async () => {
    const json = await callApi(t.app, 'GET', '/users/1.json', { auth: t.basic('lee', 'lee-directory-pw') });
    assert.equal(json.statusCode, 502);
    assert.equal(json.body, JSON.stringify({ errors: { base: [DIRECTORY_DOWN] } }));
    const xml = await callApi(t.app, 'GET', '/users/1.xml', { auth: t.basic('lee', 'lee-directory-pw'), from: '192.0.2.60' });
    assert.equal(xml.statusCode, 502);
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>${DIRECTORY_DOWN}</error>\n</errors>\n`);
  });

  it('the sign-in form of another site (POST /users/sign_in): 303 to the sign-in page with failed=directory, shown there as a sentence', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/users/sign_in', headers: { ...FORM, origin: 'http://localhost:80' }, payload: 'user%5Blogin%5D=lee&user%5Bpassword%5D=lee-directory-pw&commit=Sign+In',
    });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, '/console/sign-in?failed=directory');
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(res.body, '');
    const shown = await t.app.inject({ method: 'GET', url: '/console/sign-in?failed=directory' });
    assert.equal(shown.statusCode, 401);
    assert.equal(failureOf(shown.body), escapeHtml('The directory that checks this password cannot be reached now: try again later, or ask an administrator.'));
  });

  it('an OpenID Connect provider down: its button\'s start is the sign-in page saying why (502), no attempt kept, no cookie set', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console/sso/2/start?next=%2Fconsole%2Fusers' });
    assert.equal(res.statusCode, 502);
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(failureOf(res.body), escapeHtml('The identity provider cannot be reached: The provider\'s discovery document could not be read: the connection was refused'));
    assert.deepEqual(buttonsOf(res.body), ['/console/sso/2/start?next=%2Fconsole Sign in with Corp SSO', '/console/sso/3/start?next=%2Fconsole Sign in with Corp SAML']);
    assert.deepEqual(await t.database.db.selectFrom('sso_attempts').select('id').execute(), []);
  });

  it('a SAML provider whose metadata cannot be fetched: the same, naming the metadata URL', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console/sso/3/start' });
    assert.equal(res.statusCode, 502);
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(failureOf(res.body), escapeHtml(`The identity provider cannot be reached: The identity provider's metadata at http://127.0.0.1:${closed}/metadata could not be fetched: ECONNREFUSED`));
    assert.deepEqual(await t.database.db.selectFrom('sso_attempts').select('id').execute(), []);
  });
});
