import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { callApi } from './support/http.js';
import { type RunningOidcProvider, signInAtOidcProvider, startOidcProvider } from './support/oidc-provider.js';
import { type SimpleSamlPhp, signInAtSimpleSamlPhp, startSimpleSamlPhp } from './support/simplesamlphp.js';
import { type Slapd, startSlapd } from './support/slapd.js';

// Signing in to the console through identity providers (docs/console.md#signing-in-with-an-identity-provider),
// each a real, unmodified server the test starts: oidc-provider (OpenID Connect) on `localhost` while
// cmi is reached at 127.0.0.1; SimpleSAMLphp (SAML 2.0) on 127.0.0.1 while cmi is reached at `localhost`
// (so each return from the provider is cross-site, as in production); OpenLDAP's slapd for the
// password form and HTTP Basic. Debian's Chromium drives every page.

const PROVIDERS = '/sysadmin_tools/identity_providers.json';

describe('signing in to the console through identity providers', () => {
  let t: TestApp;
  let port: number;
  let browser: Browser;
  let oidc: RunningOidcProvider;
  let saml: SimpleSamlPhp;
  let ldap: Slapd;
  const contexts: BrowserContext[] = [];

  /** A fresh browser (no cookie of any site), whose page errors fail the test. */
  async function freshPage(): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    page.on('pageerror', (error) => assert.fail(error.message));
    return page;
  }
  const addProvider = async (body: unknown) => {
    const res = await callApi(t.app, 'POST', PROVIDERS, { auth: t.adminAuth, body: { identity_provider: body } });
    assert.equal(res.statusCode, 201, res.body);
    return (JSON.parse(res.body) as { identity_provider: { id: number } }).identity_provider.id;
  };
  const linkedSubject = async (login: string) => (await t.database.db.selectFrom('user_identities').innerJoin('users', 'users.id', 'user_identities.user_id')
    .select(['user_identities.subject', 'users.password_hash']).where('users.login', '=', login).executeTakeFirst());

  before(async () => {
    t = await createTestApp();
    port = await listenLocally(t.app);
    const adminGroup = await callApi(t.app, 'POST', '/user_groups.json', { auth: t.adminAuth, body: { user_group: { label: 'Storage team' } } });
    assert.equal(adminGroup.statusCode, 201, adminGroup.body);
    [oidc, ldap, browser] = await Promise.all([
      startOidcProvider({
        clients: [{ client_id: 'cmi', client_secret: 'oidc-client-secret', redirect_uris: [`http://127.0.0.1:${port}/console/sso/1/callback`] }],
        accounts: { jane: { sub: 'jane-0001', email: 'jane@example.com', preferred_username: 'jane', given_name: 'Jane', family_name: 'Doe', groups: ['cmi-admins'] } },
      }),
      startSlapd({ users: [{ uid: 'lee', password: 'lee-directory-pw', mail: 'lee@example.com', givenName: 'Lee', sn: 'Smith' }], groups: [{ cn: 'storage', members: ['lee'] }] }),
      chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] }),
    ]);
    const spEntityId = `http://localhost:${port}/console/sso/2/metadata`;
    saml = await startSimpleSamlPhp({
      users: [
        { login: 'sam', password: 'sam-idp-password', attributes: { uid: ['sam'], mail: ['sam@example.com'], groups: ['auditors'] } },
        { login: 'pat', password: 'pat-idp-password', attributes: { uid: ['pat'], mail: ['pat@example.com'], groups: ['auditors'] } },
      ],
      serviceProviders: [
        { entityId: spEntityId, acsUrls: [`http://localhost:${port}/console/sso/2/acs`] },
        { entityId: `http://localhost:${port}/console/sso/4/metadata`, acsUrls: [`http://localhost:${port}/console/sso/4/acs`] },
      ],
    });
    assert.equal(await addProvider({ kind: 'oidc', label: 'Corp SSO', jit_provisioning: true, settings: { issuer: oidc.issuer, client_id: 'cmi', client_secret: 'oidc-client-secret', scopes: ['openid', 'email', 'profile', 'groups'] }, mappings: [{ group: 'cmi-admins', role_ids: [1] }] }), 1);
    assert.equal(await addProvider({ kind: 'saml', label: 'Corp SAML', jit_provisioning: true, settings: { idp_metadata_url: saml.metadataUrl } }), 2);
    assert.equal(await addProvider({
      kind: 'ldap', label: 'Corp LDAP', jit_provisioning: true,
      settings: { url: ldap.ldapsUrl, ca_certificate: ldap.caCertificate, bind_dn: ldap.serviceDn, bind_password: ldap.servicePassword, base_dn: ldap.baseDn, user_filter: '(&(objectClass=inetOrgPerson)(uid={login}))' },
      mappings: [{ group: 'storage', role_ids: [2], user_group_id: 1 }],
    }), 3);
    // The same IdP as one whose metadata offers its SingleSignOnService over the HTTP-POST binding only.
    const postOnly = saml.metadataXml.replace(/(SingleSignOnService Binding="urn:oasis:names:tc:SAML:2\.0:bindings:)HTTP-Redirect"/g, '$1HTTP-POST"');
    assert.notEqual(postOnly, saml.metadataXml);
    assert.equal(await addProvider({ kind: 'saml', label: 'Staff IdP', jit_provisioning: true, settings: { idp_metadata_xml: postOnly } }), 4);
  });

  after(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await Promise.all([oidc?.close(), saml?.close(), ldap?.close()]);
    await t?.close();
  });

  it('OpenID Connect: the button, the provider\'s login, and back signed in on the console, the account made with its mapped role', async () => {
    const page = await freshPage();
    await page.goto(`http://127.0.0.1:${port}/console/sign-in?next=%2Fconsole%2Fusers`);
    await page.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
    await page.waitForURL((url) => url.host === new URL(oidc.issuer).host);
    await signInAtOidcProvider(page, 'jane');
    // Back on 127.0.0.1: the session survived the cross-site return, and the page asked for is shown.
    await page.waitForURL(`http://127.0.0.1:${port}/console/users`);
    assert.equal(await page.locator('form[action="/console/sign-out"]').count(), 1);
    const cookies = await page.context().cookies(`http://127.0.0.1:${port}/console`);
    assert.deepEqual(cookies.map((cookie) => [cookie.name, cookie.sameSite]), [['_cmi_console', 'Strict']]);
    assert.deepEqual(await linkedSubject('jane'), { subject: 'jane-0001', password_hash: '' });
    const jane = await t.database.db.selectFrom('users').select('id').where('login', '=', 'jane').executeTakeFirstOrThrow();
    const roles = await t.database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', jane.id).execute();
    assert.deepEqual(roles.map((row) => Number(row.role_id)), [1]);
    const session = await t.database.db.selectFrom('audit_events').select(['credential', 'address']).where('action', '=', 'session.create').where('target_id', '=', jane.id).execute();
    assert.deepEqual(session, [{ credential: 'sso', address: '127.0.0.1' }]);
    // The last access log has the sign-in as an identity provider's (docs/security.md#the-last-access-log).
    const accessLog = await eventually(async () => {
      const rows = JSON.parse((await callApi(t.app, 'GET', `/users/${jane.id}/last_access_log.json`, { auth: t.adminAuth })).body) as Array<{ last_access_log_item: { ip: string; credential: string; success: boolean } }>;
      assert.equal(rows.length, 1, 'the sign-in written');
      return rows.map(({ last_access_log_item: { ip, credential, success } }) => ({ ip, credential, success }));
    });
    assert.deepEqual(accessLog, [{ ip: '127.0.0.1', credential: 'sso', success: true }]);
    // A session a provider gave is the console's as any: suspending the account ends it at once.
    assert.equal((await callApi(t.app, 'POST', `/users/${jane.id}/suspend.json`, { auth: t.adminAuth })).statusCode, 200);
    await page.goto(`http://127.0.0.1:${port}/console/users`);
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    assert.equal((await callApi(t.app, 'POST', `/users/${jane.id}/activate.json`, { auth: t.adminAuth })).statusCode, 200);
  });

  it('OpenID Connect: the provider\'s answer carried to another browser is refused there, and still works in the browser that began', async () => {
    const page = await freshPage();
    let callback: string | undefined;
    // The provider's redirect back is taken, not followed: the browser that began does not return yet.
    // (Playwright routes no redirected request, so the provider's redirects after its forms are walked here.)
    const atProvider = (url: URL) => url.host === new URL(oidc.issuer).host;
    await page.context().route(atProvider, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      let from = route.request().url();
      let location = (await route.fetch({ maxRedirects: 0 })).headers().location;
      while (location !== undefined) {
        const next = new URL(location, from);
        if (next.pathname === '/console/sso/1/callback') {
          callback = next.href;
          return route.abort();
        }
        const hop = await page.context().request.get(next.href, { maxRedirects: 0 });
        if (hop.status() < 300 || hop.status() >= 400) return route.fulfill({ status: 303, headers: { location: next.href } });
        [from, location] = [next.href, hop.headers().location];
      }
      return route.abort();
    });
    await page.goto(`http://127.0.0.1:${port}/console/sign-in`);
    await page.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
    await signInAtOidcProvider(page, 'jane').catch(() => undefined);
    assert.ok(callback?.includes('code='), callback);
    const other = await freshPage();
    const refused = await other.goto(callback as string);
    assert.equal(refused?.status(), 401);
    assert.equal(await other.locator('.error').innerText(), 'This sign-in took too long, or was begun in another browser: sign in again');
    assert.deepEqual(await other.context().cookies(`http://127.0.0.1:${port}/console`), []);
    await page.goto(callback as string);
    await page.waitForURL(`http://127.0.0.1:${port}/console/overview`);
  });

  it('a session a provider gave stands for the password its account lacks for five minutes, then no more', async () => {
    const page = await freshPage();
    await page.goto(`http://127.0.0.1:${port}/console/sign-in?next=%2Fconsole%2Fusers`);
    await page.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
    await signInAtOidcProvider(page, 'jane');
    await page.waitForURL(`http://127.0.0.1:${port}/console/users`);
    const jane = await t.database.db.selectFrom('users').select('id').where('login', '=', 'jane').executeTakeFirstOrThrow();
    const addKey = async () => {
      await page.goto(`http://127.0.0.1:${port}/console/users/${jane.id}`);
      await page.fill('#description', 'deploys');
      await page.fill('#add-key-current_password', 'no password to give');
      await page.getByRole('button', { name: 'Add an API key' }).click();
    };
    await addKey();
    assert.equal(await page.locator('.field-error').count(), 0);
    t.time.advance(301);
    await addKey();
    assert.equal(await page.locator('#add-key-current_password-error').innerText(), 'current password cannot be given: this account has no cmi password. Sign in again through its identity provider, then do this within 5 minutes');
    const keys = await t.database.db.selectFrom('user_api_keys').select('description').where('user_id', '=', jane.id).execute();
    assert.deepEqual(keys, [{ description: 'deploys' }]);
  });

  it('at most 20 sign-ins under way from one address', async () => {
    const start = () => t.app.inject({ method: 'GET', url: '/console/sso/1/start', remoteAddress: '192.0.2.9' });
    for (let i = 0; i < 20; i++) assert.equal((await start()).statusCode, 303);
    const refused = await start();
    assert.equal(refused.statusCode, 429);
    assert.match(refused.body, /Too many sign-ins are under way from this address: try again in a few minutes/);
    assert.equal((await t.app.inject({ method: 'GET', url: '/console/sso/1/start', remoteAddress: '192.0.2.10' })).statusCode, 303);
  });

  it('SAML: the button, SimpleSAMLphp\'s login, the assertion posted back, signed in; the same assertion posted again is refused', async () => {
    const page = await freshPage();
    let posted: string | undefined;
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/console/sso/2/acs')) posted = request.postData() ?? undefined;
    });
    await page.goto(`http://localhost:${port}/console/sign-in`);
    await page.getByRole('link', { name: 'Sign in with Corp SAML' }).click();
    await signInAtSimpleSamlPhp(page, 'sam', 'sam-idp-password');
    await page.waitForURL(`http://localhost:${port}/console/users`);
    assert.deepEqual(await linkedSubject('sam'), { subject: saml.persistentNameId('sam', `http://localhost:${port}/console/sso/2/metadata`), password_hash: '' });
    // A replay: the very form the browser posted, posted again (by the thief of a browser's history, say).
    assert.ok(posted);
    const again = await t.app.inject({ method: 'POST', url: '/console/sso/2/acs', headers: { host: `localhost:${port}`, 'content-type': 'application/x-www-form-urlencoded', origin: saml.origin }, payload: posted });
    assert.equal(again.statusCode, 401);
    assert.match(again.body, /This sign-in took too long, or was begun in another browser|This SAML assertion was used already/);
  });

  it('SAML over the HTTP-POST binding: the start page posts the request to the IdP, the one origin its policy adds, and back signed in', async () => {
    const start = await t.app.inject({ method: 'GET', url: '/console/sso/4/start', headers: { host: `localhost:${port}` }, remoteAddress: '192.0.2.11' });
    assert.equal(start.statusCode, 200, start.body);
    assert.equal(start.headers['content-security-policy'], `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self' ${saml.origin}; base-uri 'none'`);
    assert.equal(start.headers['cache-control'], 'no-store');
    assert.match(start.body, new RegExp(`<form method="post" action="${saml.origin}/saml2/idp/SSOService.php" data-submit-at-once>`));
    const page = await freshPage();
    await page.goto(`http://localhost:${port}/console/sign-in`);
    await page.getByRole('link', { name: 'Sign in with Staff IdP' }).click();
    await signInAtSimpleSamlPhp(page, 'pat', 'pat-idp-password');
    await page.waitForURL(`http://localhost:${port}/console/users`);
    assert.deepEqual(await linkedSubject('pat'), { subject: saml.persistentNameId('pat', `http://localhost:${port}/console/sso/4/metadata`), password_hash: '' });
  });

  it('SAML: cmi\'s service provider metadata at its entity id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console/sso/2/metadata', headers: { host: `localhost:${port}` } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/samlmetadata+xml; charset=utf-8');
    assert.match(res.body, new RegExp(`entityID="http://localhost:${port}/console/sso/2/metadata"`));
    assert.match(res.body, new RegExp(`Location="http://localhost:${port}/console/sso/2/acs"`));
  });

  it('LDAP: the console\'s password form signs a directory user in, made with its group\'s role and user group; a wrong password is refused', async () => {
    const page = await freshPage();
    await page.goto(`http://127.0.0.1:${port}/console/sign-in`);
    await page.fill('#login', 'lee');
    await page.fill('#password', 'wrong');
    await page.click('button[type="submit"]');
    assert.equal(await page.locator('.error').innerText(), 'The login or the password is wrong, or the account is not active.');
    await page.fill('#password', 'lee-directory-pw');
    await page.click('button[type="submit"]');
    await page.waitForURL(`http://127.0.0.1:${port}/console/users`, { timeout: 5000 }).catch(async (error: unknown) => {
      throw new Error(`${page.url()}: ${await page.locator('body').innerText()}`, { cause: error });
    });
    const lee = await t.database.db.selectFrom('users').select(['id', 'password_hash', 'user_group_id', 'email']).where('login', '=', 'lee').executeTakeFirstOrThrow();
    assert.deepEqual({ ...lee, user_group_id: Number(lee.user_group_id) }, { id: lee.id, password_hash: '', user_group_id: 1, email: 'lee@example.com' });
  });

  it('LDAP: HTTP Basic takes the directory\'s password only where the provider allows it; a directory down is a 502 saying so', async () => {
    const basic = t.basic('lee', 'lee-directory-pw');
    const lee = await t.database.db.selectFrom('users').select('id').where('login', '=', 'lee').executeTakeFirstOrThrow();
    const own = `/users/${lee.id}.json`;
    assert.equal((await callApi(t.app, 'GET', own, { auth: basic })).statusCode, 401);
    assert.equal((await callApi(t.app, 'PUT', '/sysadmin_tools/identity_providers/3.json', { auth: t.adminAuth, body: { identity_provider: { settings: { allow_basic_auth: true } } } })).statusCode, 204);
    const allowed = await callApi(t.app, 'GET', own, { auth: basic });
    assert.equal(allowed.statusCode, 200, allowed.body);
    // Only the login in its one form is asked of the directory (which would take these for `lee`).
    for (const variant of [' lee', 'ｌｅｅ', 'lee\t']) assert.equal((await callApi(t.app, 'GET', own, { auth: t.basic(variant, 'lee-directory-pw') })).statusCode, 401, variant);
    // Disabled: the directory's password stops working at once, the verification kept for it too.
    assert.equal((await callApi(t.app, 'PUT', '/sysadmin_tools/identity_providers/3.json', { auth: t.adminAuth, body: { identity_provider: { enabled: false } } })).statusCode, 204);
    assert.equal((await callApi(t.app, 'GET', own, { auth: basic })).statusCode, 401);
    assert.equal((await callApi(t.app, 'PUT', '/sysadmin_tools/identity_providers/3.json', { auth: t.adminAuth, body: { identity_provider: { enabled: true } } })).statusCode, 204);
    assert.equal((await callApi(t.app, 'GET', own, { auth: basic })).statusCode, 200);
    await ldap.close();
    // Another address: the verification kept for the first one does not answer it.
    const down = await callApi(t.app, 'GET', own, { auth: basic, from: '192.0.2.50' });
    assert.equal(down.statusCode, 502);
    assert.equal(down.body, JSON.stringify({ errors: { base: ['The directory Corp LDAP cannot be reached: try again later, or ask an administrator'] } }));
    // The break-glass administrator's own password never asks the directory.
    assert.equal((await callApi(t.app, 'GET', '/users.json', { auth: t.adminAuth, from: '192.0.2.50' })).statusCode, 200);
  });
});
